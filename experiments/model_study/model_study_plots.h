#pragma once
// The figures of a model study (model_study.h), re-rendered from its saved summary.json and
// predictions/*.csv (so `perftune plot DIR` needs no rerun), as PNG and SVG under DIR/plots/:
//   scatter_STUDY.{png,svg}  predicted vs measured runtime of every held-out config (log-log), one
//                            colour per model and task, the line predicted = measured; a study with
//                            more than kMaxScatterPoints configs per series plots an even stride
//   tau_STUDY.{png,svg}      Kendall's tau per held-out kernel, one bar per model that ranks
//                            (random search's tau is 0 by definition and left out)
#include <cstddef>
#include <string>
#include <vector>

namespace perftune {

// Points per (model, task) series in a scatter: enough to show the cloud's shape, small enough for
// an SVG of a few hundred KB (the GEMM study holds ~18,000 configs).
inline constexpr std::size_t kMaxScatterPoints = 2000;

// True if DIR/summary.json is a model study's (its "kind" is "model_study").
bool is_model_study_results(const std::string& results_dir);

// Returns the image paths written. Throws InputError for a missing or malformed summary.json or
// predictions file, std::runtime_error when gnuplot fails.
std::vector<std::string> render_model_study_plots(const std::string& results_dir);

}  // namespace perftune
