#pragma once
// The budget loop. Each round the strategy proposes, the model ranks, and the top k unmeasured
// configs (a share epsilon of them uniformly random) go to the backend; results go to the record
// log and the history, and the model learns from them. It stops at the measurement or
// hardware-seconds budget, on early stopping, or when the space is used up.
//
// Resume follows TVM: the loop is re-run deterministically from the start, and a config already
// in the log takes its logged result instead of being measured again. With a deterministic backend
// (replay) and the same seed, a resumed campaign ends exactly where an uninterrupted one ends.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "hardware/backend.h"
#include "ir/record_log.h"
#include "search/history.h"
#include "search/strategy.h"
#include "surrogate/cost_model.h"

namespace perftune {

struct TunerOptions {
  std::size_t max_measurements = 0;   // 0: no limit on the count (then max_hardware_seconds must be set)
  double max_hardware_seconds = 0.0;  // 0: no limit on the backend's charged time
  std::size_t top_k = 0;              // per round; 0: default_top_k(max_measurements)
  double epsilon = 0.05;              // share of each batch drawn at random (Ansor's eps_greedy default)
  std::size_t early_stopping = 0;     // stop after this many measurements without a new best; 0: never
  std::uint64_t seed = 0;
  std::vector<Config> measure_first;  // e.g. the default config: measured in round 0, before searching
};

// k = 64 (AutoTVM's and Ansor's usual batch), scaled down so that a small budget still gets about
// ten rounds of feedback: min(64, max(1, budget / 10)).
std::size_t default_top_k(std::size_t max_measurements);

// Why the loop stopped.
enum class StopReason { kMeasurementBudget, kHardwareBudget, kEarlyStopping, kSpaceExhausted };
std::string_view stop_reason_name(StopReason reason);

struct RoundReport {
  std::size_t round = 0;
  std::size_t measured = 0;          // measurements so far (from the log or the backend)
  double hardware_seconds = 0.0;
  std::optional<double> best_seconds;
  std::size_t failed = 0;
};

struct TuneResult {
  History history;                            // every measurement, in order
  std::vector<std::optional<double>> best_after;  // best ok runtime after each measurement
  std::size_t rounds = 0;
  std::size_t from_log = 0;                   // measurements taken from the log on resume
  std::size_t failed = 0;
  double hardware_seconds = 0.0;              // charged by the backend (or the log) for all measurements
  double backend_wall_seconds = 0.0;          // wall time inside Backend::measure
  double wall_seconds = 0.0;
  StopReason stop = StopReason::kMeasurementBudget;
};

class Tuner {
 public:
  // `model` may be null (model-free strategies); `log` may be null (nothing is recorded).
  // `logged` holds earlier records of this kernel on this backend (resume); they are used instead
  // of measuring whenever the loop picks their config.
  Tuner(Backend& backend, Strategy& strategy, CostModel* model, RecordLog* log, TunerOptions options);

  // Throws std::invalid_argument for a zero budget, a model-needing strategy without a model, or
  // an empty space. Measurement failures are recorded, never thrown.
  TuneResult run(const Kernel& kernel, const SearchSpace& space, const std::vector<Record>& logged = {},
                 const std::function<void(const RoundReport&)>& progress = {});

 private:
  Backend& backend_;
  Strategy& strategy_;
  CostModel* model_;
  RecordLog* log_;
  TunerOptions options_;
};

}  // namespace perftune
