// perftune plot RESULTS_DIR: re-render an experiment's (or a model study's) plots from its saved results.
#include <iostream>
#include <memory>

#include "cli/command.h"
#include "experiments/experiment_plots.h"
#include "experiments/model_study/model_study_plots.h"

namespace perftune::cli {
namespace {

const bool registered = register_command({"plot", "Re-render an experiment's plots (PNG and SVG) from its summary.json",
  [](CLI::App& app) {
    auto results = std::make_shared<std::string>();
    app.add_option("results_dir", *results, "An experiment's output folder (holds summary.json)")->required();
    app.callback([results] {
      const auto written =
          is_model_study_results(*results) ? render_model_study_plots(*results) : render_experiment_plots(*results);
      for (const std::string& path : written) std::cout << path << "\n";
    });
  }});

}  // namespace
}  // namespace perftune::cli
