#pragma once
// The budget loop of autotuner/tuner.h, one round at a time: a network's task scheduler
// (autotuner/network/task_scheduler.h) keeps one session per kernel and gives the next round to
// the kernel it judges most worth it. A session's clock runs only inside step(), so its search
// deadlines and wall time count its own rounds, not the other kernels'.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <unordered_map>
#include <vector>

#include "autotuner/tuner.h"

namespace perftune {

class TuningSession {
 public:
  // Throws std::invalid_argument for a zero budget, a model-needing strategy without a model, a
  // search time share outside [0, 1], or an empty space. The references must outlive the session.
  // `clock` times the rounds and their search deadlines.
  TuningSession(Backend& backend, Strategy& strategy, CostModel* model, RecordLog* log, TunerOptions options,
                const Kernel& kernel, const SearchSpace& space, const std::vector<Record>& logged = {},
                const Clock& clock = steady_clock());

  // Runs one round of at most `at_most` configs (besides the loop's own k and budget): proposes,
  // measures, records, updates the model. False (and nothing run) once the loop has stopped;
  // result().stop says why. A record log that cannot be written throws
  // std::runtime_error naming the log; every record written before stays intact.
  bool step(std::size_t at_most = SIZE_MAX);
  bool stopped() const { return stopped_; }
  // After a round: what it left (RoundReport::round is the round just run).
  RoundReport report() const;
  // Everything so far; wall_seconds counts the time inside step().
  const TuneResult& result() const { return result_; }

 private:
  std::vector<MeasureResult> measure_robustly(const std::vector<Config>& configs, double best_seconds);
  std::vector<MeasureResult> measure_once(const std::vector<Config>& configs);
  SearchDeadline round_deadline(double loop_seconds, std::size_t k) const;
  double seconds_since(double start) const { return clock_.now_seconds() - start; }
  std::optional<double> best_seconds() const;
  // The search's model and the strategy's own (a re-ranker): this session is the one place that
  // updates them, with the same measurements in the same order.
  std::vector<CostModel*> learning_models() const;
  // Appends one final result to the history and the counters.
  void account(const Config& config, MeasureResult outcome, double search_so_far, std::vector<Measurement>& fresh);

  Backend& backend_;
  Strategy& strategy_;
  CostModel* model_;
  RecordLog* log_;
  TunerOptions options_;
  BatchPolicy batch_policy_;  // from options_.batch_policy
  const Kernel& kernel_;
  const SearchSpace& space_;
  const Clock& clock_;
  std::string device_;
  std::vector<std::string> knob_names_;
  std::unordered_map<Config, const Record*, ConfigHash> from_log_;
  std::size_t k_max_ = 0;
  TuneResult result_;
  std::size_t round_ = 0;
  std::size_t since_best_ = 0;
  double other_seconds_ = 0.0;  // the last round's time outside the backend and the strategy
  bool stopped_ = false;
};

}  // namespace perftune
