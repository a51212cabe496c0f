// perftune collect COLLECT.json [--plan]: measures tile and fusion configs of programs on
// this CPU into a record log, with a progress bar; rerunning resumes where it stopped.
#include <iostream>
#include <memory>
#include <unistd.h>

#include "autotuner/model_picks.h"
#include "cli/command.h"
#include "distributed/ranks.h"
#include "hardware/halide/halide_backend.h"
#include "hardware/wrappers/first_measure_hook.h"
#include "hardware/wrappers/rank_spread_backend.h"
#include "offline/corpus_collection.h"
#include "offline/machine_check.h"

namespace perftune::cli {
namespace {

struct CollectOptions {
  std::string config;
  std::string output;
  bool json = false;
  bool plan = false;
};

const bool registered = register_command({"collect", "Build a training corpus by measuring bundled programs on this CPU (resumable)",
  [](CLI::App& app) {
    auto o = std::make_shared<CollectOptions>();
    app.add_option("config", o->config, "Collect config (configs/collect/*.json)")->required()->check(CLI::ExistingFile);
    app.add_option("--output", o->output, "Record log to write (overrides the config's \"output\")");
    app.add_flag("--json", o->json, "Print the summary as JSON");
    app.add_flag("--plan", o->plan, "Plan only: count the kernels and configs a run would measure, measure nothing");
    app.callback([o] {
      CollectSpec spec = load_collect_spec(o->config);
      if (!o->output.empty()) spec.output = o->output;
      spec.plan_only = o->plan;
      // Under mpirun each rank measures on its own host: rank 0 plans and writes the log, spreading
      // every batch over the ranks (raise batch_size with the rank count to keep them all busy).
      Ranks& ranks = process_ranks();
      if (ranks.rank() > 0) {
        HalideBackend local(spec.cpu);
        return serve_measurements(local, ranks);
      }
      const ProposeConfigs propose = spec.model_picks_per_kernel > 0 ? make_model_picker(parse_model_picks(spec)) : ProposeConfigs{};
      // Which machine this sitting measured on (offline/machine_check.h), checked before its first measurement.
      FirstMeasureHook backend(std::make_unique<RankSpreadBackend>(std::make_unique<HalideBackend>(spec.cpu), ranks),
                               machine_check_hook("collect", spec.cpu.threads,
                                                  spec.output + ".machine_checks.jsonl", &std::cerr));
      const bool terminal = ::isatty(2);
      const auto summary = collect_corpus(spec, backend, [&](const CollectProgress& p) {
        std::cerr << (terminal ? "\r" : "") << progress_bar(p) << (terminal ? "" : "\n") << std::flush;
      }, propose);
      stop_serving(ranks);
      if (terminal) std::cerr << "\n";
      for (const std::string& w : summary.warnings) std::cerr << "warning: " << w << "\n";
      if (summary.held_out_kernels > 0)
        std::cerr << "collect: " << summary.held_out_kernels << " kernels the held-out networks' plan has too: left out\n";
      const double per_minute = summary.seconds > 0 ? 60.0 * static_cast<double>(summary.measured) / summary.seconds : 0.0;
      if (o->json) {
        nlohmann::ordered_json j;
        j["output"] = spec.output;
        j["device"] = backend.fingerprint();
        j["planned"] = summary.planned;
        j["measured"] = summary.measured;
        j["skipped"] = summary.skipped;
        j["failed"] = summary.failed;
        j["kernels"] = summary.kernels;
        j["held_out_kernels"] = summary.held_out_kernels;
        j["reference_kernels"] = summary.reference_kernels;
        j["log_records"] = summary.log_records;
        j["seconds"] = summary.seconds;
        j["records_per_minute"] = per_minute;
        print_json(j.dump(2));
      } else if (o->plan) {
        std::cout << spec.output << ": would measure " << summary.planned << " configs of " << summary.kernels << " kernels ("
                  << summary.skipped << " already recorded)";
        if (spec.references) std::cout << ", and the references of " << summary.reference_kernels << " kernels";
        std::cout << "\n";
      } else {
        std::cout << spec.output << ": measured " << summary.measured << " (" << summary.failed << " failed), skipped "
                  << summary.skipped << " already recorded, " << summary.kernels << " kernels; log holds " << summary.log_records
                  << " records; " << summary.seconds << " s (" << per_minute << " records/min)\n";
      }
    });
  }});

}  // namespace
}  // namespace perftune::cli
