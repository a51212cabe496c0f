#pragma once
// A recorded corpus measured again, in more sittings. A record's runtime is one sitting's figure,
// and on this machine a config's runtime moves by a few percent from one process and minute to
// the next (two collections of corpus/cpu_corpus rank a kernel's configs alike only to a Kendall
// tau of 0.65-0.72): more than separates the fastest fusion placements of many programs, so a
// ranking scored against one figure per config partly scores the noise. Here the selected records'
// configs are measured in `rounds` more rounds (measurement_rounds.h: each round on one fresh
// backend shared by every space, each space's configs in a shuffled order, resumable), and each
// record's "seconds" becomes the lower median over its sittings, the recorded figure and the
// rounds', with those figures kept in its "sittings" (the recorded one first; null for a failed
// round). Every other line is copied unchanged.
#include <cstddef>
#include <functional>
#include <optional>
#include <string>

#include "offline/corpus_collection.h"
#include "offline/measurement_rounds.h"

namespace perftune {

enum class RemeasuredSpaces {
  kFusion,  // whole-program fusion placements (every knob a fuse.<e>): what the fusion task ranks
  kTile,    // every other space: kernels' schedules
  kAll,
};

// "fusion", "tile", "all"; nullopt otherwise.
std::optional<RemeasuredSpaces> parse_remeasured_spaces(const std::string& name);

struct CorpusRemeasureSpec {
  std::string input;          // a record log with kernel definitions (plain or gzip)
  std::string output;         // the log written (may be `input`), once every round is complete
  std::string rounds_folder;  // the rounds' logs, one folder per space: what a second call resumes from
  std::size_t rounds = 3;
  RemeasuredSpaces spaces = RemeasuredSpaces::kFusion;
};

struct CorpusRemeasureSummary {
  std::string device;
  std::size_t spaces = 0;         // spaces re-measured
  std::size_t configs = 0;        // records re-measured (each in every round)
  std::size_t other_device = 0;   // records of the selected spaces from another device: left as they were
  std::size_t failed_median = 0;  // records whose median over sittings is a failure: left as they were
  // Per re-measured record, |median over sittings / recorded figure - 1|: the median of those.
  double median_change = 0.0;
  bool complete = false;          // every round measured and `output` written
};

// Re-measures the spec's spaces of `input` on the backends `make_backend` makes (whose
// fingerprint must be the device of the records re-measured) and writes `output`. `stop` is asked
// between batches; a stopped call writes nothing, and the next resumes from the rounds' logs.
// `progress` is called after each space of each round with the measurements (configs x rounds)
// done and planned.
// Throws InputError naming the file for an unreadable log or one with no record of the selected
// spaces on this device.
CorpusRemeasureSummary remeasure_corpus(const CorpusRemeasureSpec& spec, const BackendMaker& make_backend,
                                        const std::function<bool()>& stop,
                                        const std::function<void(const CollectProgress&)>& progress);

}  // namespace perftune
