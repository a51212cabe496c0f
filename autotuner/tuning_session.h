#pragma once
// The budget loop of autotuner/tuner.h, one round at a time: a network's task scheduler
// (autotuner/network/task_scheduler.h) keeps one session per kernel and gives the next round to
// the kernel it judges most worth it. A session's clock runs only inside step(), so its search
// deadlines and wall time count its own rounds, not the other kernels'.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <unordered_map>
#include <unordered_set>
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

  // step()'s phases, in order, and what they share.
  // When the running round started: the session's time in its earlier rounds, and the clock then.
  struct RoundStart {
    double active_before = 0.0;
    double at = 0.0;
  };
  // The session's clock: its earlier rounds plus this one so far.
  double loop_seconds(const RoundStart& start) const { return start.active_before + seconds_since(start.at); }
  // Ends the loop for `reason`, its wall time counted up to now; returns false, step()'s answer then.
  bool stop(StopReason reason, const RoundStart& start);
  // What stops the loop before the next round (a budget spent, no new best for long), if anything.
  std::optional<StopReason> budget_stop() const;
  // The round's k: doubling from one config while ramping, all the configs to measure first in round 0, within the
  // budget and `at_most`.
  std::size_t round_size(std::size_t at_most) const;
  std::vector<Config> choose_batch(std::size_t k, const RoundStart& start);
  // The strategy's `greedy` proposals, ranked by the model and chosen by the batch policy among the unmeasured ones.
  std::vector<Config> greedy_picks(std::size_t greedy, std::size_t k, const RoundStart& start,
                                   const std::unordered_set<Config, ConfigHash>& in_batch);
  std::vector<MeasureResult> measure_unlogged(const std::vector<Config>& batch);
  // Returns the batch's measurements in batch order, for the models to learn from.
  std::vector<Measurement> record_batch(const std::vector<Config>& batch, std::vector<MeasureResult> measured_now,
                                        double search_so_far);
  void update_models(const std::vector<Measurement>& fresh);

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
