#pragma once
// Scoring a live space on fresh measurements of the configs its scores rest on.
//
// A live run's curve holds one measurement per config (the experiment's memo measures each config
// once), and f_opt is the fastest of thousands of them. On a machine whose timings move from one
// process and minute to the next (here the same config's runtime varies across runs by several
// percent, and by far more on kernels whose working set is about the size of the L3), that minimum is
// the luckiest draw among many near-optimal configs, below what its config runs at, and every
// strategy's P(b) is measured against it: the winner's curse. So, once the runs are done, the
// configs the scores depend on are measured again: each run's best after each report budget
// (chosen as a tuner chooses, by the run's own measurement) and the space's `top` fastest configs,
// `repeats` times each, in rounds (offline/measurement_rounds.h: each a fresh backend, the configs
// in a shuffled order). A config's re-measured runtime is the median of its rounds (a failed round
// counts as slower than any time);
// f_opt is the fastest of those, f_random(b) the random strategy's runs' picks re-measured, and
// each run's P(b) is computed again with its pick valued at its re-measured runtime. Reported beside
// the score, which stays on the runs' own measurements. A strategy whose runs measure no configs of
// the space (Adams2019's sampling: the autoscheduler's own schedules) has no re-measured score.
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "ir/config.h"
#include "ir/kernel.h"
#include "ir/measurement.h"
#include "ir/search_space.h"
#include "offline/measurement_rounds.h"

namespace perftune {

// An experiment's "remeasure": {"repeats": 3, "top": 10, "references": [DIR]} (absent: live spaces
// are not re-measured).
struct RemeasurePlan {
  std::size_t repeats = 3;  // rounds; each measures every config once
  std::size_t top = 10;     // the fastest distinct configs the runs measured, re-measured as well
  // Other experiments' output folders on the same spaces (e.g. a long campaign beside a short check
  // of its first budgets): each space's `top` fastest configs their runs measured are re-measured
  // in the same rounds, so f_opt is the best either experiment found, measured side by side.
  std::vector<std::string> references;
};

// A run of a live space as re-measuring needs it.
struct LiveRun {
  std::size_t strategy = 0;
  bool random = false;  // a run of the random strategy: its picks make f_random(b)
  // Per scored budget: the config of the run's best valid measurement after b (none valid yet: empty).
  std::vector<std::optional<Config>> best_at;
  std::vector<std::pair<Config, double>> measured;  // every valid measurement of the run
};

// The run whose record log holds `records` (its measurements, in the space's knob order) and whose
// best-so-far curve is `best_after`. Its best after b is found by value: the record whose runtime is
// best_after[b - 1] (the closest, where a re-measured confirmation replaced the first figure).
LiveRun live_run(std::size_t strategy, bool random, const std::vector<std::pair<Config, MeasureResult>>& records,
                 const std::vector<std::optional<double>>& best_after, const std::vector<std::size_t>& budgets);

// The configs to re-measure, each once: every run's best at every budget, and the `top` fastest
// distinct configs any run measured.
std::vector<Config> remeasure_candidates(const std::vector<LiveRun>& runs, std::size_t top);

// The records of `kernel_key` in the record log at `path`, in the knob order `knob_names` (records
// of other kernels, or of another space of the kernel, skipped).
std::vector<std::pair<Config, MeasureResult>> space_records(const std::string& path, const std::string& kernel_key,
                                                            const std::vector<std::string>& knob_names);

// What marks a run folder set aside because its run was defined differently (FOLDER.stale-ID,
// experiment_runner.cpp): its records are kept, but no longer read as the space's runs.
inline constexpr std::string_view kStaleRunMarker = ".stale-";

// Every valid measurement of the space named `space` (its folder under OUTPUT/runs/) in another
// experiment's output folder, as one run without picks: the records of `kernel_key` in the knob
// order `knob_names` from each records.jsonl below REFERENCE/runs/SPACE (runs set aside as
// *.stale-* skipped). Empty when the reference holds no such space.
LiveRun reference_run(const std::string& reference, const std::string& space, const std::string& kernel_key,
                      const std::vector<std::string>& knob_names);

// The noise ceiling's runs measured this many of a space's fastest configs: one round of 10.
inline constexpr std::size_t kNoiseCeilingConfigs = 10;

// A live space's re-measured scores:
//   {"configs": N, "repeats": R, "round_spread": median robust CV of a config over its rounds,
//    "optimum_seconds": re-measured f_opt, "measured_optimum_seconds": the runs' f_opt,
//    "measured_optimum_remeasured_seconds": its config re-measured, "random_within_noise_at": [b],
//    "strategies": {NAME: {"score_at": {"b": P}, "pick_seconds_at": {"b": mean re-measured pick},
//    "mean_score": P}}, "noise_ceiling_pick_seconds": S, "noise_ceiling_at": {"b": P}}
// `values[i]` is configs[i]'s re-measured runtime. A run's pick that failed every re-measurement,
// like a run with no valid runtime yet, is charged the slowest re-measured runtime. P at b is null
// for every strategy when the space has no random run, or when random search's picks re-measure
// within two round spreads (at least 1% each) of the optimum (listed in random_within_noise_at):
// there the difference P divides by is smaller than the noise, and P would measure the noise.
// The noise ceiling is what the noise alone leaves of P: the score of runs that measured the
// kNoiseCeilingConfigs fastest configs (by re-measured runtime) once each in one sitting and kept
// the fastest figure, as a tuner keeps its best. Each round stands for that sitting; the config it
// keeps is valued at the mean of its other rounds (S: the mean over rounds). A strategy scoring
// near it is as close to the optimum as one figure per config can tell.
nlohmann::ordered_json remeasured_scores(const std::vector<LiveRun>& runs, const std::vector<Config>& configs,
                                         const std::vector<std::optional<double>>& values,
                                         const std::vector<std::vector<MeasureResult>>& rounds,
                                         const std::vector<std::string>& strategies, const std::vector<std::size_t>& budgets);

// Per strategy, over the spaces' "remeasured" sections: "remeasured_score" (P averaged over
// budgets and spaces), "remeasured_score_at" (per budget, averaged over the spaces where P is
// defined) and "remeasured_spaces_at" (how many those are), added to
// `strategy_table` (summarize_curves' "strategies"). Nothing is added when no space was re-measured.
void add_remeasured_scores(nlohmann::ordered_json& strategy_table, const std::vector<nlohmann::ordered_json>& spaces,
                           const std::vector<std::size_t>& budgets);

// The noise ceilings averaged like a strategy's scores: {"score", "score_at", "spaces_at"}.
nlohmann::ordered_json remeasured_noise_ceiling(const std::vector<nlohmann::ordered_json>& spaces, const std::vector<std::size_t>& budgets);

}  // namespace perftune
