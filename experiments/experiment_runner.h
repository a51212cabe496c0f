#pragma once
// Runs an experiment: every (space, strategy, seed) campaign in parallel on a TBB task arena, each
// source loaded once and shared read-only (a live backend's runs go one at a time: concurrent
// timings on the same cores would disturb each other), then writes to the output folder
//   runs/SPACE/STRATEGY/seed_N/   each run's run_identity, records.jsonl and summary.json (a
//                                 finished run is reused on restart while its run_identity, i.e.
//                                 its definition, is unchanged; an unfinished one resumes from its
//                                 log; a run defined differently is moved to seed_N.stale-ID and
//                                 run again; "changed_runs" in the summary counts those)
//   models/SPACE.HASH.json, .pt   pre-trained models of "pretrain" strategies (pretraining.h),
//                                 trained before the runs, reused on restart
//   runs.csv                      space,strategy,seed,measurement,best_seconds,hardware_seconds
//   summary.json                  speedup_curves.h's tables plus what ran
//   plots/                        PNG and SVG (experiment_plots.h), unless disabled
#include <cstddef>
#include <iosfwd>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "distributed/ranks.h"

#include "experiments/experiment.h"

namespace perftune {

struct ExperimentOptions {
  std::size_t jobs = 0;                 // concurrent runs; 0: the machine's hardware threads
  std::string output;                   // overrides experiment.output when non-empty
  std::optional<std::size_t> seeds;     // overrides experiment.seeds (e.g. a quick check)
  std::optional<std::uint64_t> first_seed;  // overrides experiment.first_seed (seeds first_seed ..)
  // Start no run after this many seconds of wall time: a live experiment of many hours is measured
  // in sittings, each ending between two runs (a run cut mid-way resumes, but an autoscheduler's
  // sampling run starts over). The runs not started are left for the next call.
  std::optional<double> stop_after_seconds;
  bool plots = true;
  std::ostream* progress = nullptr;     // a progress bar, when set
  // Redraw the bar in place (a terminal); otherwise one line per tenth of the runs, so a log
  // file gets a dozen readable lines rather than one line of every redraw.
  bool progress_redraws = true;
  // The processes sharing the runs (distributed/ranks.h; mpirun): each runs those it owns, rank 0
  // then reads the others' from the output folder (shared by every rank) and writes runs.csv, the
  // summary and the plots. Null: this process alone.
  Ranks* ranks = nullptr;
};

// Returns the summary it wrote. Throws InputError for problems of the experiment (a source that
// does not load, a kernel not in it, a model not in this build) before any run starts when they
// can be seen then (a pretrain section with nothing to train on names its JSON path); finished runs
// and pre-trained models stay on disk whatever happens, so a rerun continues. The summary's
// "pretraining" lists each pre-trained model: space (per_source: its one source), per_source,
// checkpoint, sources, reused, training report.
// On a rank other than 0 it returns null once its runs are done. Stopped by stop_after_seconds
// with runs left, it writes no summary and returns {"stopped_early": true, "finished_runs",
// "runs"} (finished runs, whether reused or run now, out of all).
nlohmann::ordered_json run_experiment(const Experiment& experiment, const ExperimentOptions& options = {});

}  // namespace perftune
