#pragma once
// The time-axis score of Kernel Tuner's methodology for comparing optimization algorithms
// (Willemsen et al., package autotuning_methodology): the standardized score P of
// speedup_curves.h, taken at tuning times t instead of measurement counts b and averaged over a
// window of times set by how long random search needs on the space. Written from the method's
// description, not from its code.
//
// - Time. A measurement completes at the hardware seconds charged so far (replay: each Kernel
//   Tuner config's compile_time + verification_time + benchmark_time + framework_time) plus the
//   strategy's own wall time before its batch was sent (search, model, records:
//   RunCurve::search_after, measured on this machine, because that is what a user pays).
// - f_strategy(t): the mean over seeds of each run's best valid runtime among the measurements
//   completed by t (none yet: the space's slowest valid runtime, as for P(b)); a run that stopped
//   before t keeps its last best.
// - f_random(t): random search pays the space's mean cost c per config (failed ones included:
//   they are drawn too), so by t it has made floor(t / c) draws and f_random(t) is
//   expected_random_best of that many (none yet: the slowest valid runtime). The methodology
//   rounds t / c; flooring makes random search's own runs score exactly 0 when every config costs
//   the same (the brute-force test), where rounding credits it half a draw it has not made.
// - The window. target(p) = f_opt + (median - f_opt) (1 - p) lies p of the way from the median
//   valid runtime to the optimum; t(p) = c times the fewest draws whose expected best reaches it.
//   The score averages P(t) over kTimeGridPoints equally spaced times from t(p_start) to t(p_end)
//   (times where random search is already optimal have no P and are left out), then over seeds
//   (the per-run mean, for the standard error), then over spaces.
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "experiments/scoring/speedup_curves.h"
#include "experiments/scoring/time_window.h"

namespace perftune {

// The methodology's resolution (1e3 intervals); every 10th point is kept for plots.
inline constexpr std::size_t kTimeGridPoints = 1001;
inline constexpr std::size_t kTimeCurveStride = 10;

// A window on one recorded space, in draws of random search and in seconds.
struct TimeWindowSpan {
  double seconds_per_config = 0.0;  // c: the mean charged cost of a recorded config
  std::size_t start_draws = 0, end_draws = 0;
  double start_seconds = 0.0, end_seconds = 0.0;
};

// Empty when the space has no cost per config (a live space, or a recording without costs).
std::optional<TimeWindowSpan> time_window_span(const RecordedValues& values, const TimeWindow& window);

// f_random(t) (see above).
double random_best_at_time(const RecordedValues& values, double seconds_per_config, double seconds);

// The best valid runtime `run` had found by `seconds` of tuning time (see above).
double run_best_at_time(const RunCurve& run, const RecordedValues& values, double seconds);

struct TimeAxisScore {
  double score = 0.0;              // mean P(t) over the window's grid and the runs
  std::vector<double> per_run;     // each run's own mean P(t) over the grid
  // The share of runs still measuring at the window's end. The methodology runs every strategy to
  // it; a run whose measurement budget ends earlier keeps its last best while random search's
  // expectation keeps improving, so below 1 the score charges the budget, not only the strategy.
  double covered = 0.0;
  std::vector<double> curve;       // mean P at every kTimeCurveStride-th grid point (NaN: undefined)
};

// Empty when P is undefined over the whole window (random search optimal from its start).
std::optional<TimeAxisScore> time_axis_score(const RecordedValues& values, const TimeWindowSpan& span,
                                             const std::vector<const RunCurve*>& runs);

// Adds the time-axis scores to summarize_curves' `tables`: per space "time_windows" (each
// window's span) and per space and strategy "time_score", "time_score_standard_error" and
// "time_score_curve" and "time_window_covered" (TimeAxisScore::covered) by window label; per strategy "time_score" and "time_score_standard_error"
// (mean over the spaces that have one; null when none has). Live spaces get none.
void add_time_axis_scores(nlohmann::ordered_json& tables, const std::vector<SpaceBaseline>& spaces,
                          const std::vector<std::string>& strategies, const std::vector<RunCurve>& runs,
                          const std::vector<TimeWindow>& windows);

}  // namespace perftune
