// perftune train TRAIN.json [--output CHECKPOINT] [--json]: train the learned model (the GNN, or the
// tree model with "learner": "trees") on the training side of the config's split and write a
// checkpoint (weights + JSON metadata).
#include <iostream>
#include <memory>

#include "cli/command.h"
#include "cli/cpu_tiling.h"
#include "distributed/ranks.h"
#include "ir/input_error.h"
#include "surrogate/study/study_runner.h"
#include "surrogate/training/gloo_gradient_sync.h"
#include "surrogate/training/torch_threads.h"

namespace perftune::cli {
namespace {

struct TrainCommandOptions {
  std::string config;
  std::string output;
  bool json = false;
  int threads = 1;
};

const bool registered = register_command({"train", "Train the learned performance model (GNN) from TRAIN.json",
  [](CLI::App& app) {
    auto options = std::make_shared<TrainCommandOptions>();
    app.add_option("config", options->config, "TRAIN.json: sources, split, model, train options, checkpoint")->required();
    app.add_option("--output,-o", options->output, "Checkpoint to write (overrides the config's \"checkpoint\")");
    app.add_flag("--json", options->json, "Print the training report as JSON (progress goes to stderr)");
    // One intra-op thread by default: kernel graphs are small, and on a shared 2-core machine
    // OpenMP's spinning barriers make a second thread many times slower, not faster (bench/gnn_bench
    // compares the two).
    app.add_option("--threads", options->threads, "libtorch intra-op threads (0: one per core)")->capture_default_str();
    app.callback([options] {
      configure_torch_threads(options->threads);
      StudyConfig config = StudyConfig::load(options->config);
      const std::string output = !options->output.empty() ? options->output : config.checkpoint.value_or("");
      if (output.empty()) throw InputError(config.file, "$.checkpoint", "a checkpoint path (or --output)");
      // Under mpirun: data-parallel over the ranks (c10d gloo); rank 0 reports and writes the checkpoint.
      Ranks& ranks = process_ranks();
      std::unique_ptr<GradientSync> sync;
      if (ranks.size() > 1) sync = gloo_gradient_sync(ranks);
      config.train.gradient_sync = sync.get();
      const LoadedSources sources = load_sources(config);
      std::ostream* progress = ranks.rank() > 0 ? nullptr : options->json ? &std::cerr : &std::cout;
      if (config.learner == "trees") {
        if (ranks.rank() > 0) return;  // boosting is not data-parallel here: rank 0 trains alone
        TreeTrainReport report;
        auto model = train_trees_from_config(config, sources, progress, &report);
        nlohmann::ordered_json summary{{"config", config.file}, {"checkpoint", output}, {"training", report.to_json()}};
        model->save(output, summary);
        if (options->json) print_json(summary.dump(2));
        else
          std::cout << "trained the tree model in " << report.seconds << " s (" << report.kernels << " kernels, " << report.rows
                    << " configs, " << report.features << " features)\ncheckpoint: " << output << "\n";
        return;
      }
      TrainReport report;
      auto model = train_from_config(config, sources, cpu_default_tiling, progress, &report);
      if (ranks.rank() > 0) return;
      nlohmann::ordered_json summary{{"config", config.file}, {"checkpoint", output}, {"ranks", ranks.size()},
                                     {"training", report.to_json()}};
      model->save(output, summary);
      if (options->json) {
        print_json(summary.dump(2));
      } else {
        std::cout << "trained in " << report.seconds << " s (" << report.epochs << " epochs, kept epoch " << report.best_epoch
                  << ", validation tau " << report.best_validation_tau << ", " << report.samples << " samples, "
                  << static_cast<double>(report.samples) / report.seconds << " samples/s on " << ranks.size() << " rank(s))\n"
                  << "checkpoint: " << output << "\n";
      }
    });
  }});

}  // namespace
}  // namespace perftune::cli
