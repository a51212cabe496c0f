#pragma once
// Measuring configs again, in rounds. On a machine whose timings move from one process and minute
// to the next (here a config's runtime varies across sittings by a robust CV of 4-15%), one figure
// per config is one sitting's draw; a config's runtime is better told by the median over several
// sittings. Each round stands for one: a fresh backend (fresh worker processes), the configs in a
// shuffled order, so neither a worker's state nor a moment's load favours a config. Used to
// re-measure a live experiment's picks (experiments/live/remeasurement.h) and a recorded corpus
// (corpus_remeasure.h).
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "hardware/backend.h"
#include "ir/config.h"
#include "ir/kernel.h"
#include "ir/measurement.h"
#include "ir/search_space.h"

namespace perftune {

using BackendMaker = std::function<std::unique_ptr<Backend>()>;

struct Remeasured {
  std::vector<std::vector<MeasureResult>> rounds;  // per config (the order given), one result per finished round
  bool complete = false;                           // every round of every config measured
};

// Measures `configs` of `kernel` in `rounds` rounds, logged in FOLDER/round_N.jsonl (one record
// per config and round; a kill loses at most the batch under way, and a second call measures only
// what is missing). Each round makes a fresh backend and measures the configs its log lacks, in an
// order shuffled by the round number, a batch at a time; between batches `stop` may end it early
// (the result is then not complete).
Remeasured remeasure(const Kernel& kernel, const SearchSpace& space, const std::vector<Config>& configs,
                     std::size_t rounds, const std::string& folder, const BackendMaker& make_backend,
                     const std::function<bool()>& stop, std::ostream* progress);

// The backend a round measures on, made when first asked for (a round whose log is complete asks
// for none).
using RoundBackend = std::function<Backend&()>;

// One round of remeasure(): the configs FOLDER/round_N.jsonl lacks (its records of `device` and
// `kernel` count), measured on `backend()` in the round's shuffled order and logged there; then
// each config's result of the round, in the order given. Nullopt when `stop` ended it early.
// `rounds` is only for the progress lines. A caller re-measuring many kernels shares one backend
// per round across them (corpus_remeasure.h): each fresh backend starts worker processes.
std::optional<std::vector<MeasureResult>> measure_round(const Kernel& kernel, const SearchSpace& space,
                                                        const std::vector<Config>& configs, std::size_t round,
                                                        std::size_t rounds, const std::string& folder,
                                                        const std::string& device, const RoundBackend& backend,
                                                        const std::function<bool()>& stop, std::ostream* progress);

// A config's re-measured runtime: the lower median of its rounds, a failed round counting as
// slower than any time; empty when the median is a failure or there is no round.
std::optional<double> remeasured_seconds(const std::vector<MeasureResult>& rounds);

}  // namespace perftune
