#pragma once
// From the best-so-far curves of many runs to what an experiment reports: per space and strategy,
// for every budget b, the best runtime over seeds (mean, median, 25-75% band), the speedup over
// the space's reference and the standardized score P(b); per strategy, one score and the speedup
// at the report budgets.
//
// Conventions (stated here once, repeated in summary.json):
// - f_strategy(b) is the mean over seeds of the best valid runtime after b measurements. A run
//   that stopped before b (space used up, hardware budget) keeps its last best; a run with no
//   valid runtime yet is charged the space's slowest valid runtime (see random_baseline.h).
// - The speedup reference is the space's default config when it has one, else the median valid
//   runtime of the recorded space (labelled "median" in the output).
// - A live space's f_random(b) and f_opt are measured, not exact (SpaceBaseline::live).
// - Per strategy: "score" is P(b) averaged over the report budgets (those <= the experiment's
//   budget) and over spaces; "speedup_at" is the geometric mean over spaces of the median speedup.
// - "score_standard_error" (per strategy) and "mean_score_standard_error" (per space and strategy)
//   are the standard errors of those scores over seeds: P(b) is the mean of each run's own P(b),
//   so a score is a mean over independent runs, and its standard error says how far another set
//   of seeds would likely move it (two scores closer than about twice it are not told apart).
//   Null with fewer than two runs of a space. On a live space f_random(b) is itself a mean over
//   the random strategy's runs; its own error is left out (it is exact on a recorded space).
// - Per recorded space, "optimum_noise" says how many configs the recording cannot rank against
//   its optimum (optimum_noise.h); null on a live space or when the optimum has no repeats. The
//   score ignores it.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "experiments/scoring/optimum_noise.h"
#include "experiments/scoring/random_baseline.h"

namespace perftune {

struct RunCurve {
  std::size_t space = 0;
  std::size_t strategy = 0;
  std::uint64_t seed = 0;
  std::vector<std::optional<double>> best_after;  // best valid runtime after each measurement
  std::vector<double> hardware_after;             // hardware seconds charged after each measurement
  // The strategy's own wall time (search, model, records) spent before each measurement's batch
  // was sent; empty: not recorded (the time-axis score then counts hardware time alone).
  std::vector<double> search_after;
};

struct SpaceBaseline {
  std::string name;
  std::string kernel;
  std::string device;
  RecordedValues values;
  std::optional<double> default_seconds;
  // A live space (measured during the experiment, nothing recorded) has no exact random baseline:
  // f_random(b) is then this curve, the random strategy's mean best after b measurements (empty:
  // no random strategy ran, so P(b) is undefined), and `values` pools the runs' best-so-far
  // runtimes (its optimum is the best any run measured).
  bool live = false;
  std::vector<double> measured_random;
  // A recorded space's optimum against the recording's own noise (empty: live, or no repeats).
  std::optional<OptimumNoise> noise;
};

// The best-so-far value of `run` after b >= 1 measurements under the conventions above.
double best_at(const RunCurve& run, const RecordedValues& values, std::size_t b);

// The standard error of a weighted sum of space means, sum_s w_s * mean(per_run_s), where
// per_run_s holds each run's own score on space s: the runs of a space are independent draws (one
// per seed), so the variance is sum_s w_s^2 var_s / n_s. Null when a weighted space has fewer than
// two runs (no spread to estimate).
nlohmann::ordered_json standard_error(const std::vector<std::pair<double, const std::vector<double>*>>& weighted);

// The arithmetic mean of a non-empty sample.
double mean(const std::vector<double>& sample);

// The report budgets a score averages over: those within 1..max_budget.
std::vector<std::size_t> scored_budgets(const std::vector<std::size_t>& report_budgets, std::size_t max_budget);

// Linear-interpolation quantile (q in [0, 1]) of a non-empty sample.
double quantile(std::vector<double> sample, double q);

// {"spaces": [...], "strategies": {NAME: {"score", "score_standard_error", "speedup_at", "score_at", "score_per_space"}}}
// over budgets 1..max_budget. Throws std::invalid_argument when a (space, strategy) pair has no run.
nlohmann::ordered_json summarize_curves(const std::vector<SpaceBaseline>& spaces,
                                        const std::vector<std::string>& strategies, const std::vector<RunCurve>& runs,
                                        std::size_t max_budget, const std::vector<std::size_t>& report_budgets);

}  // namespace perftune
