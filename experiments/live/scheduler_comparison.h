#pragma once
// Each strategy against the fastest of the platform's own schedulers (a live space's peers of kind
// "scheduler": Halide's autoschedulers on the CPU, each already at its best settings), the
// question a user of a tuner asks first: is the tuned program faster than what my compiler's own
// tools give me? Library calls (OpenBLAS, oneDNN) are references of another kind and left out.
//
// The ratio is the scheduler's seconds over the strategy's f_strategy(b) (the mean over seeds of
// the best valid runtime after b measurements, as the score uses): above 1 the strategy is faster.
// Two bases: the runs' own figures against the peers measured once (each from whatever sitting
// and machine ran it), or, where the experiment re-measures its live spaces, each run's pick and
// each peer measured again in the same rounds (remeasurement.h): only a ratio measured side by
// side holds on machines of one kind whose speeds differ from day to day by more than the ratio.
#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace perftune {

// A ratio at or above this counts as keeping up with the scheduler (within 5%).
inline constexpr double kKeepsUpWithScheduler = 0.95;

enum class ComparisonBasis {
  kRunFigures,  // a space row's "peers" and its strategies' "best_mean"
  kRemeasured,  // its "remeasured" block's "peers" and strategies' "pick_seconds_at"
};

// Writes into each space row with a scheduler that ran (for kRemeasured: into its "remeasured"
// block) "fastest_scheduler" {name, seconds} and per strategy "vs_fastest_scheduler" {b: ratio},
// and per strategy of `strategies` (the summary's table) "vs_fastest_scheduler" (kRemeasured:
// "vs_fastest_scheduler_remeasured") {b: {geomean, min, min_space, spaces_keeping_up, spaces}}
// over those rows. Nothing is written where no space has a scheduler that ran.
void add_scheduler_comparison(nlohmann::ordered_json& spaces, nlohmann::ordered_json& strategies,
                              const std::vector<std::size_t>& budgets, ComparisonBasis basis = ComparisonBasis::kRunFigures);

}  // namespace perftune
