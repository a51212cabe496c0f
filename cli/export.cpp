// perftune export RUN_DIR --output DIR [--name NAME] [--at-minutes C] [--profile] [--json]: a tuned network as a library to link.
#include <iostream>
#include <memory>

#include "cli/command.h"
#include "export/network_export.h"

namespace perftune::cli {
namespace {

struct ExportOptions {
  std::string run;
  std::string output;
  std::string name;
  bool json = false;
  double at_minutes = -1;
  bool profile = false;
};

const bool registered = register_command({"export", "Compile a tuned network (a `tune NETWORK` folder) into a static library, header and example",
  [](CLI::App& app) {
    auto options = std::make_shared<ExportOptions>();
    app.add_option("run", options->run, "The folder `perftune tune NETWORK --output DIR` wrote")->required();
    app.add_option("--output", options->output, "Folder for NAME.a, NAME.h, tuning.json and example/")->required();
    app.add_option("--name", options->name, "The entry point's name (default: the network's, as a C identifier)");
    app.add_option("--at-minutes", options->at_minutes,
                   "Use only what the run had measured after this many minutes of tuning (0: every kernel's heuristic)");
    app.add_flag("--profile", options->profile,
                 "Build the kernels with Halide's profiler: a program linking the library prints each kernel's time per run at exit");
    app.add_flag("--json", options->json, "Print tuning.json on stdout");
    app.callback([options] {
      NetworkExportOptions how;
      how.name = options->name;
      if (options->at_minutes >= 0) how.at_seconds = 60 * options->at_minutes;
      how.profile = options->profile;
      const auto tuning = export_network(options->run, options->output, how);
      if (options->json) return print_json(tuning.dump(2));
      if (!tuning["complete"].get<bool>())
        std::cerr << "[export] the run is still going or was killed: exporting the best schedules recorded so far\n";
      if (!tuning["untuned"].empty())
        std::cerr << "[export] " << tuning["untuned"].size() << " kernel(s) untuned, with the heuristic schedule: " << tuning["untuned"].dump() << "\n";
      if (!tuning["fell_back"].empty())
        std::cerr << "[export] recorded schedules Halide rejected ahead of time (heuristic used): " << tuning["fell_back"].dump() << "\n";
      std::cout << "library " << tuning["library"].get<std::string>() << " (entry point " << tuning["entry_point"].get<std::string>()
                << ", header beside it); estimated latency " << tuning["estimated_latency_seconds"].dump() << " s\nexample in "
                << options->output << "/example: cmake -S " << options->output << "/example -B build_example && cmake --build build_example\n";
    });
  }});

}  // namespace
}  // namespace perftune::cli
