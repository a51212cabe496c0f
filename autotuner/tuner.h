#pragma once
// The budget loop. Each round the strategy proposes, the model ranks, and the top k unmeasured
// configs (a share epsilon of them uniformly random) go to the backend (a batch policy may widen the
// pool and choose the batch from the model's posterior: search/batch_policy.h); results go to the record
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
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "hardware/backend.h"
#include "ir/clock.h"
#include "ir/record_log.h"
#include "search/batch_policy.h"
#include "search/history.h"
#include "search/strategy.h"
#include "surrogate/cost_model.h"

namespace perftune {

struct TunerOptions {
  std::size_t max_measurements = 0;   // 0: no limit on the count (then max_hardware_seconds must be set)
  double max_hardware_seconds = 0.0;  // 0: no limit on the backend's charged time
  std::size_t top_k = 0;              // per round; 0: default_top_k(max_measurements)
  // Rounds measure 1, 2, 4, ... configs until top_k: the budget is counted in measurements, not
  // rounds, and a model that learns from the target steers the next batch sooner (after 1, 3, 7
  // measurements instead of only after the first top_k). Costs a few more rounds of search.
  bool ramp_batches = false;
  double epsilon = 0.05;              // share of each batch drawn at random (Ansor's eps_greedy default)
  std::size_t early_stopping = 0;     // stop after this many measurements without a new best; 0: never
  std::uint64_t seed = 0;
  // e.g. the default config and the compiler's heuristic: measured in round 0, before searching;
  // every round's search sees them as its anchors (SearchContext::anchors).
  std::vector<Config> measure_first;
  // A timeout may be the machine's hiccup, not the config's fault: retry it this many times in
  // the same round. No other failure is retried (a compile error or a crash repeats itself).
  std::size_t timeout_retries = 2;
  // Before believing a would-be new best that nothing vouches for (much faster than the model's
  // prediction or its measured neighbours), measure it three times more and take the median
  // (autotuner/best_confirmation.h). Guards the result against transient too-fast times.
  bool confirm_best = false;
  // A would-be new best less than this fraction faster than the best so far is re-measured three
  // times and judged by the median too (ConfirmationPolicy::close_margin): one figure of a near-tie
  // is as likely luck as a difference. Charged to the hardware time, not to the measurement count
  // (it measures the same config again). 0: off.
  double confirm_close_best = 0.0;
  // The largest share of the loop's wall time spent outside the backend (search, model, records),
  // in (0, 1); 0 or 1: no limit. Each round's search gets a deadline: the share of the backend
  // time measured so far plus this round's (priced at the mean time per config measured so far),
  // minus the time already spent outside the backend. Backend time is the larger of its wall time
  // and the cost it charged, so measurements served without running (a memo, a resumed log) count
  // as the hardware time they stand for. The first round, with nothing measured to price it by,
  // searches with the strategy's configured effort, unlimited; what a round leaves unused carries
  // over. A limit makes proposals depend on the machine's speed, so a replay
  // campaign (whose hardware time is not wall time) leaves it at 0.
  double search_time_share = 0.0;
  // Every logged record of the kernel joins the history before round 0, whatever search proposes
  // now: a network's task resumes with all it measured. Off: a logged config counts only when the
  // loop picks it again (TVM's resume, which makes a replayed campaign end where it ended).
  bool adopt_logged = false;
  // How each round's batch is chosen among the ranked proposals; a campaign's comes from its
  // model spec (batch_policy_options), not from a key of its own.
  BatchPolicyOptions batch_policy;
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
  // Per measurement, the loop's wall time outside the backend (search, model, records) spent
  // before its batch was sent: with the hardware seconds charged so far, when its result was known
  // (the time axis of experiments/scoring/time_axis_score.h).
  std::vector<double> search_after;
  std::size_t rounds = 0;
  std::size_t from_log = 0;                   // measurements taken from the log on resume
  std::size_t failed = 0;
  std::map<MeasureStatus, std::size_t> failed_by_status;  // failed configs by their final status
  std::size_t retries = 0;                    // extra backend attempts after timeouts
  std::size_t confirmations = 0;              // extra backend attempts confirming a new best
  // Configs whose final result is a failure (after retries): never proposed to the backend again
  // in this campaign, nor on resume (their record stands in for them).
  std::vector<Config> quarantined;
  double hardware_seconds = 0.0;              // charged by the backend (or the log) for all measurements
  // Wall time inside Backend::measure: code generation, compiling and running the configs all
  // count as hardware time (compiling a kernel is part of measuring it).
  double backend_wall_seconds = 0.0;
  std::size_t backend_configs = 0;            // configs sent to the backend, retries and confirmations included
  // Where the rest of the wall time went: Strategy::propose (search, with its model calls), the
  // tuner's re-ranking predict() and the model's batch choice, the model's update(), record-log appends.
  double propose_seconds = 0.0;
  double rank_seconds = 0.0;
  double update_seconds = 0.0;
  double record_seconds = 0.0;
  double wall_seconds = 0.0;
  StopReason stop = StopReason::kMeasurementBudget;
};

class Tuner {
 public:
  // `model` may be null (model-free strategies); `log` may be null (nothing is recorded). `clock`
  // times the loop and its search deadlines (a test's clock advances by hand); it must outlive the tuner.
  Tuner(Backend& backend, Strategy& strategy, CostModel* model, RecordLog* log, TunerOptions options,
        const Clock& clock = steady_clock());

  // The whole loop (autotuner/tuning_session.h runs it a round at a time). `logged` holds earlier
  // records of this kernel on this backend (resume); they are used instead of measuring whenever
  // the loop picks their config. Throws as TuningSession's constructor does; measurement failures
  // are recorded, never thrown.
  TuneResult run(const Kernel& kernel, const SearchSpace& space, const std::vector<Record>& logged = {},
                 const std::function<void(const RoundReport&)>& progress = {});

 private:
  Backend& backend_;
  Strategy& strategy_;
  CostModel* model_;
  RecordLog* log_;
  TunerOptions options_;
  const Clock& clock_;
};

}  // namespace perftune
