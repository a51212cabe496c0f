// perftune: the command line. Each subcommand lives in its own file and registers itself.
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <string>

#include "autotuner/factories/schedule_feature_sources.h"
#include "cli/command.h"
#include "distributed/ranks.h"
#include "frontend/onnx_source.h"
#include "surrogate/training/torch_threads.h"

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
  perftune::provide_schedule_feature_sources();
  perftune::frontend::register_onnx_source();
  app.set_version_flag("--version", "perftune 0.1");
  // A bad flag is one line, as every other failure is (CLI11's default adds a second).
  app.failure_message([](const CLI::App*, const CLI::Error& error) { return std::string(error.what()) + " (see --help)\n"; });
  auto& all = commands();
  std::sort(all.begin(), all.end(), [](const Command& a, const Command& b) { return a.name < b.name; });
  for (const Command& command : all) command.setup(*app.add_subcommand(command.name, command.description));
  // Under mpirun every rank runs this same command line; these commands divide their work among
  // the ranks (the others would each do all of it, into the same files).
  if (perftune::process_ranks().size() > 1) {
    const std::string subcommand = argc > 1 ? argv[1] : "";
    if (subcommand != "experiment" && subcommand != "tune" && subcommand != "collect" && subcommand != "train") {
      if (perftune::process_ranks().rank() == 0)
        std::cerr << "perftune " << subcommand << ": error: only experiment, tune, collect and train run under mpirun with more than one rank\n";
      perftune::process_ranks().abort(2);
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    return app.exit(error);
  } catch (const std::exception& error) {
    // One line, naming what failed; the exit code says it failed.
    std::string subcommand = app.get_subcommands().empty() ? "" : " " + app.get_subcommands().front()->get_name();
    std::cerr << "perftune" << subcommand << ": error: " << error.what() << "\n";
    // Under mpirun the other ranks may be waiting for this one: end them all.
    if (perftune::process_ranks().size() > 1) perftune::process_ranks().abort(1);
    return 1;
  }
  return 0;
}
