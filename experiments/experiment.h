#pragma once
// An experiment read from JSON (configs/experiments/*.json): every strategy tuned on every space
// with many seeds, each run an ordinary campaign (autotuner/campaign/campaign.h) built in memory.
//
//   {"name": "...", "description": "...",
//    "spaces": [{"name": "gemm/RTX_Titan", "source": {"path", "kernel", "device"}, "default": {...},
//                "role": "target" | "source"}],
//    "strategies": [{"name": "SA (measured)", "strategy": {...}, "model": {...}, "confirm_close_best": 0.1}],
//    "backend": {...}, "budget": {"measurements": 200, "hardware_seconds": S},
//    "top_k": K, "ramp_batches": false, "epsilon": 0.05, "seeds": 20, "first_seed": 1, "measure_once": "sitting",
//    "report_budgets": [10, 25, 50, 100, 200],
//    "time_windows": [{"start": 0.5, "end": 0.96}, {"start": 0.01, "end": 0.95}],
//    "remeasure": {"repeats": 3, "top": 10, "references": [DIR]}, "output": DIR}
// The "source", "default", "strategy", "model", "backend" and "budget" sections are exactly those
// of a campaign, except that a model may be {"type": "learned", "pretrain": {...}}: a GNN trained per
// space on the experiment's other devices of that kernel (experiments/pretraining/pretraining.h), or
// {"type": "recorded", "sources": "other_devices", ...}: those devices' recordings, a reference; and a
// "program" source with a live backend (cpu) is a live space, measured during the experiment
// (speedup_curves.h says how its baseline is measured instead of computed). Every (space, strategy)
// pair is checked as a campaign on load, so a mistake fails
// before anything runs, naming its place in the experiment file.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "autotuner/campaign/campaign.h"
#include "experiments/live/remeasurement.h"
#include "experiments/pretraining/pretrain_spec.h"
#include "experiments/scoring/time_window.h"
#include "hardware/wrappers/measure_once_backend.h"

namespace perftune {

// What a space is for. By default both: every space is tuned (held out in turn) and serves the
// others of its kernel as a source ("other_devices"). A user tuning a new device D from recordings
// of A, B and C names D the target and A, B, C sources: the sources are not tuned, and a target
// never serves as a source, so adding a new recording does not change what the others learn from.
enum class SpaceRole { kTargetAndSource, kTarget, kSource };

struct ExperimentSpace {
  std::string name;  // unique; also a folder name under runs/
  nlohmann::json source;
  std::optional<nlohmann::json> default_config;
  SpaceRole role = SpaceRole::kTargetAndSource;

  bool tuned() const { return role != SpaceRole::kSource; }
  bool serves_as_source() const { return role != SpaceRole::kTarget; }
};

struct ExperimentStrategy {
  std::string name;  // unique; the label in tables and plots
  nlohmann::json strategy;
  nlohmann::json model;  // {"type": "none"} when absent
  // Set for a "pretrain" model: each run gets {"type": "learned", "checkpoint": the space's model}.
  std::optional<PretrainSpec> pretrain;
  // A reference model {"type": "recorded", "sources": "other_devices", ...}: each run's model reads
  // the recordings of its space's kernel on the experiment's other devices (surrogate/transfer/recorded_model.h).
  bool recorded_other_devices = false;
  // The campaign's "confirm_close_best" for this strategy's runs (absent: off).
  std::optional<double> confirm_close_best;

  // Whether each run's model names its space's sources (per-source priors, recorded references),
  // which are known only once the spaces are loaded (experiment_campaign's prior_spaces).
  bool models_name_sources() const { return (pretrain && pretrain->per_source) || recorded_other_devices; }
};

struct Experiment {
  std::string file;
  std::string name;
  std::string description;
  std::vector<ExperimentSpace> spaces;
  std::vector<ExperimentStrategy> strategies;
  nlohmann::json backend;
  nlohmann::json budget;
  std::optional<std::size_t> top_k;
  bool ramp_batches = false;  // every strategy's rounds measure 1, 2, 4, ... configs up to top_k
  double epsilon = 0.05;  // Ansor's eps_greedy default, as in a campaign
  std::size_t seeds = 0;
  std::uint64_t first_seed = 1;
  // Budgets reported in tables and averaged into each strategy's score; the five.
  std::vector<std::size_t> report_budgets = {10, 25, 50, 100, 200};
  // The windows of the time-axis score (time_axis_score.h); not part of a run's definition.
  std::vector<TimeWindow> time_windows = default_time_windows();
  // A live experiment's runs share one memo of measurements (hardware/wrappers/measure_once_backend.h:
  // each config of a space measured once, at OUTPUT/measured_once.jsonl); not part of a run's
  // definition. "measure_once": "sitting" (or true) serves the figures of this sitting,
  // "experiment" those of every sitting, false turns the memo off.
  bool measure_once = true;
  MemoScope memo_scope = MemoScope::kSitting;
  // Live spaces' picks and best configs measured again once the runs are done, for a score on
  // fresh measurements beside the runs' own (experiments/live/remeasurement.h); not part of a run's
  // definition. Unset: not re-measured.
  std::optional<RemeasurePlan> remeasure;
  std::string output;  // resolved against the experiment file's folder

  // The largest measurement budget of a run (0 when only hardware seconds bound it).
  std::size_t max_measurements() const;
};

// Throws InputError (file, JSON path, expectation) for an invalid experiment.
Experiment load_experiment(const std::string& path);
Experiment parse_experiment(const nlohmann::json& json, const std::string& file);

// The campaign of one run, writing into `output` (validated like any campaign file). A pretrain
// strategy's campaign loads pretrained_checkpoint_path(experiment.output, space, spec); a per_source
// one loads the model of each space in `prior_spaces`, a recorded one their recordings (its
// sources, known once the spaces are loaded; null: every space stands in, for checking the
// campaign before then).
Campaign experiment_campaign(const Experiment& experiment, std::size_t space, std::size_t strategy,
                             std::uint64_t seed, const std::string& output,
                             const std::vector<std::string>* prior_spaces = nullptr);

// What a run's results depend on: its campaign as the experiment defines it (source, backend,
// model, strategy, budget, seed; not the output folder, even where checkpoints are named under it),
// the content of the files its space reads (a program or recording, and a recorded reference's
// sources: not where they lie) and of the checkpoints its model loads (not how long their training
// took), as 16 hex digits of a stable hash. A rerun reuses a finished run only while this is
// unchanged, so editing a strategy under the same name, a program in place, or retraining the
// checkpoint a strategy names, runs it again instead of reporting the old curves. `prior_spaces`
// as for experiment_campaign.
std::string run_identity(const Experiment& experiment, std::size_t space, std::size_t strategy, std::uint64_t seed,
                         const std::vector<std::string>* prior_spaces = nullptr);
// run_identity as runs recorded it before they named their space's files by content (by path, as
// written in the experiment): the runner takes a folder holding it for the run it names, once.
std::string path_named_run_identity(const Experiment& experiment, std::size_t space, std::size_t strategy,
                                    std::uint64_t seed, const std::vector<std::string>* prior_spaces = nullptr);

}  // namespace perftune
