#pragma once
// Subcommands register themselves, one file each, so adding a command touches no shared file.
#include <functional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace perftune::cli {

struct Command {
  std::string name;
  std::string description;
  // Adds options to the subcommand and sets its callback.
  std::function<void(CLI::App&)> setup;
};

std::vector<Command>& commands();
bool register_command(Command command);

// Prints JSON to stdout with a trailing newline.
void print_json(const std::string& dumped);

}  // namespace perftune::cli
