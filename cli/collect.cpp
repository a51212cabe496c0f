// perftune collect COLLECT.json: measures random tile and fusion configs of bundled programs on
// this CPU into a record log, with a progress bar; rerunning resumes where it stopped.
#include <iostream>
#include <memory>
#include <unistd.h>

#include "cli/command.h"
#include "hardware/corpus_collection.h"
#include "hardware/halide_backend.h"

namespace perftune::cli {
namespace {

struct CollectOptions {
  std::string config;
  std::string output;
  bool json = false;
};

const bool registered = register_command({"collect", "Build a training corpus by measuring bundled programs on this CPU (resumable)",
  [](CLI::App& app) {
    auto o = std::make_shared<CollectOptions>();
    app.add_option("config", o->config, "Collect config (configs/collect/*.json)")->required()->check(CLI::ExistingFile);
    app.add_option("--output", o->output, "Record log to write (overrides the config's \"output\")");
    app.add_flag("--json", o->json, "Print the summary as JSON");
    app.callback([o] {
      CollectSpec spec = load_collect_spec(o->config);
      if (!o->output.empty()) spec.output = o->output;
      HalideBackend backend(spec.cpu);
      const bool terminal = ::isatty(2);
      const auto summary = collect_corpus(spec, backend, [&](const CollectProgress& p) {
        std::cerr << (terminal ? "\r" : "") << progress_bar(p) << (terminal ? "" : "\n") << std::flush;
      });
      if (terminal) std::cerr << "\n";
      for (const std::string& w : summary.warnings) std::cerr << "warning: " << w << "\n";
      const double per_minute = summary.seconds > 0 ? 60.0 * static_cast<double>(summary.measured) / summary.seconds : 0.0;
      if (o->json) {
        nlohmann::ordered_json j;
        j["output"] = spec.output;
        j["device"] = backend.fingerprint();
        j["measured"] = summary.measured;
        j["skipped"] = summary.skipped;
        j["failed"] = summary.failed;
        j["kernels"] = summary.kernels;
        j["log_records"] = summary.log_records;
        j["seconds"] = summary.seconds;
        j["records_per_minute"] = per_minute;
        print_json(j.dump(2));
      } else {
        std::cout << spec.output << ": measured " << summary.measured << " (" << summary.failed << " failed), skipped "
                  << summary.skipped << " already recorded, " << summary.kernels << " kernels; log holds " << summary.log_records
                  << " records; " << summary.seconds << " s (" << per_minute << " records/min)\n";
      }
    });
  }});

}  // namespace
}  // namespace perftune::cli
