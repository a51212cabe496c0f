#pragma once
// The figures of an experiment, re-rendered from its saved summary.json (so `perftune plot DIR`
// needs no rerun), as PNG and SVG under DIR/plots/ with their gnuplot scripts and data:
//   speedup_SPACE.{png,svg}  speedup over the reference vs budget (log axis), one line per
//                            strategy (median over seeds) with its 25-75% band, and random search
//   score.{png,svg}          each strategy's score (P averaged over report budgets and spaces)
//   score_vs_budget.{png,svg} P(b) averaged over spaces, per strategy
#include <string>
#include <vector>

namespace perftune {

// Returns the image paths written. Throws InputError for a missing or malformed summary.json and
// std::runtime_error when gnuplot fails.
std::vector<std::string> render_experiment_plots(const std::string& results_dir);

}  // namespace perftune
