// perftune: the command line. Each subcommand lives in its own file and registers itself.
#include <algorithm>
#include <cstdio>
#include <iostream>

#include "cli/command.h"
#include "surrogate/torch_threads.h"

namespace perftune::cli {

std::vector<Command>& commands() {
  static std::vector<Command> all;
  return all;
}

bool register_command(Command command) {
  commands().push_back(std::move(command));
  return true;
}

void print_json(const std::string& dumped) {
  std::fwrite(dumped.data(), 1, dumped.size(), stdout);
  std::fputc('\n', stdout);
  std::fflush(stdout);
}

}  // namespace perftune::cli

int main(int argc, char** argv) {
  using namespace perftune::cli;
  CLI::App app{"perftune: an autotuner for tensor programs driven by a learned performance model"};
  app.require_subcommand(1);
  perftune::configure_torch_threads();
  app.set_version_flag("--version", "perftune 0.1");
  auto& all = commands();
  std::sort(all.begin(), all.end(), [](const Command& a, const Command& b) { return a.name < b.name; });
  for (const Command& command : all) command.setup(*app.add_subcommand(command.name, command.description));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    return app.exit(error);
  } catch (const std::exception& error) {
    // One line, naming what failed; the exit code says it failed.
    std::string subcommand = app.get_subcommands().empty() ? "" : " " + app.get_subcommands().front()->get_name();
    std::cerr << "perftune" << subcommand << ": error: " << error.what() << "\n";
    return 1;
  }
  return 0;
}
