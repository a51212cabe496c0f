#include "autotuner/tuner.h"

#include <algorithm>

#include "autotuner/tuning_session.h"

namespace perftune {

std::size_t default_top_k(std::size_t max_measurements) {
  constexpr std::size_t kBatch = 64;          // AutoTVM's and Ansor's num_measures_per_round
  constexpr std::size_t kRoundsAtLeast = 10;  // ours: enough rounds for the model to learn from
  if (max_measurements == 0) return kBatch;
  return std::min(kBatch, std::max<std::size_t>(1, max_measurements / kRoundsAtLeast));
}

std::string_view stop_reason_name(StopReason reason) {
  switch (reason) {
    case StopReason::kMeasurementBudget: return "measurement_budget";
    case StopReason::kHardwareBudget: return "hardware_budget";
    case StopReason::kEarlyStopping: return "early_stopping";
    case StopReason::kSpaceExhausted: return "space_exhausted";
  }
  return "unknown";
}

Tuner::Tuner(Backend& backend, Strategy& strategy, CostModel* model, RecordLog* log, TunerOptions options, const Clock& clock)
    : backend_(backend), strategy_(strategy), model_(model), log_(log), options_(std::move(options)), clock_(clock) {}

TuneResult Tuner::run(const Kernel& kernel, const SearchSpace& space, const std::vector<Record>& logged,
                      const std::function<void(const RoundReport&)>& progress) {
  TuningSession session(backend_, strategy_, model_, log_, options_, kernel, space, logged, clock_);
  while (session.step())
    if (progress) progress(session.report());
  return session.result();
}

}  // namespace perftune
