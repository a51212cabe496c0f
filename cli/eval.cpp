// perftune eval EVAL.json [--json] [--per-kernel]: train (or load) the learned model and score it
// with the baselines on held-out kernels: Kendall's tau, top-1/5/10 slowdown, MAPE.
#include <iostream>
#include <memory>

#include "cli/command.h"
#include "cli/cpu_tiling.h"
#include "surrogate/study_runner.h"
#include "surrogate/torch_threads.h"

namespace perftune::cli {
namespace {

struct EvalCommandOptions {
  std::string config;
  bool json = false;
  int threads = 1;
  bool per_kernel = false;
};

const bool registered = register_command({"eval", "Evaluate the learned model against baselines on a held-out split (EVAL.json)",
  [](CLI::App& app) {
    auto options = std::make_shared<EvalCommandOptions>();
    app.add_option("config", options->config, "EVAL.json: sources, split, model, train options, models to compare")->required();
    app.add_flag("--json", options->json, "Print {\"models\": {...}, \"kernels\": [...]} as JSON (progress goes to stderr)");
    app.add_flag("--per-kernel", options->per_kernel, "Also print a table per held-out kernel");
    // One intra-op thread by default: kernel graphs are small, and on a shared 2-core machine
    // OpenMP's spinning barriers made a second thread 12x slower (bench/gnn_bench: 435 vs 5,424
    // early-join configs/s on a 100-node kernel, load average 5).
    app.add_option("--threads", options->threads, "libtorch intra-op threads (0: one per core)")->capture_default_str();
    app.callback([options] {
      configure_torch_threads(options->threads);
      const StudyConfig config = StudyConfig::load(options->config);
      const LoadedSources sources = load_sources(config);
      std::ostream& progress = options->json ? std::cerr : std::cout;
      const StudyResult result = run_evaluation(config, sources, &progress, cpu_default_tiling);
      if (options->json) {
        nlohmann::ordered_json json = to_json(result.table);
        json["config"] = config.file;
        json["seconds"] = result.seconds;
        json["folds"] = nlohmann::ordered_json::array();
        for (const FoldReport& fold : result.folds)
          json["folds"].push_back({{"fold", fold.fold}, {"train_kernels", fold.train_kernels}, {"test_kernels", fold.test_kernels},
                                   {"from_checkpoint", fold.from_checkpoint}, {"training", fold.training.to_json()}});
        print_json(json.dump(2));
      } else {
        std::cout << format_table(result.table, options->per_kernel) << "evaluated in " << result.seconds << " s\n";
      }
    });
  }});

}  // namespace
}  // namespace perftune::cli
