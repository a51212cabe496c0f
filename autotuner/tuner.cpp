#include "autotuner/tuner.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <unordered_set>

#include "autotuner/best_confirmation.h"
#include "search/random_search.h"
#include "search/random_streams.h"

namespace perftune {

namespace {

constexpr std::uint64_t kEpsilonStream = 0x65707367;  // "epsg": the epsilon-greedy draws of a round

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// An ok result whose time is not a valid runtime becomes a runtime_error saying why.
MeasureResult validated(MeasureResult outcome) {
  if (outcome.ok() && runtime_problem(outcome.seconds))
    return MeasureResult::failure(MeasureStatus::kRuntimeError,
                                  "backend reported an invalid runtime: " + *runtime_problem(outcome.seconds),
                                  outcome.cost_seconds);
  return outcome;
}

}  // namespace

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

std::vector<MeasureResult> Tuner::measure_once(const Kernel& kernel, const SearchSpace& space,
                                               const std::vector<Config>& configs, TuneResult& result) {
  const auto backend_start = std::chrono::steady_clock::now();
  std::vector<MeasureResult> measured = backend_.measure(kernel, space, configs);
  result.backend_wall_seconds += seconds_since(backend_start);
  result.backend_configs += configs.size();
  if (measured.size() != configs.size())
    throw std::runtime_error("backend " + backend_.fingerprint() + " returned " + std::to_string(measured.size()) +
                             " results for " + std::to_string(configs.size()) + " configs");
  for (MeasureResult& outcome : measured) outcome = validated(std::move(outcome));
  return measured;
}

std::vector<MeasureResult> Tuner::measure_robustly(const Kernel& kernel, const SearchSpace& space,
                                                   const std::vector<Config>& configs, double best_seconds,
                                                   TuneResult& result) {
  std::vector<MeasureResult> outcomes = measure_once(kernel, space, configs, result);
  // Every attempt's hardware time is charged to the config's final result.
  std::vector<double> total_cost(configs.size());
  for (std::size_t i = 0; i < configs.size(); ++i) total_cost[i] = outcomes[i].cost_seconds;
  auto measure_again = [&](const std::vector<std::size_t>& which) {
    std::vector<Config> again;
    for (std::size_t i : which) again.push_back(configs[i]);
    std::vector<MeasureResult> measured = measure_once(kernel, space, again, result);
    for (std::size_t j = 0; j < which.size(); ++j) total_cost[which[j]] += measured[j].cost_seconds;
    return measured;
  };

  std::vector<std::size_t> timeouts_seen(configs.size(), 0);
  for (std::size_t attempt = 0; attempt < options_.timeout_retries; ++attempt) {
    std::vector<std::size_t> retry;
    for (std::size_t i = 0; i < configs.size(); ++i)
      if (outcomes[i].status == MeasureStatus::kTimeout) retry.push_back(i);
    if (retry.empty()) break;
    std::vector<MeasureResult> again = measure_again(retry);
    result.retries += retry.size();
    for (std::size_t j = 0; j < retry.size(); ++j) {
      const std::size_t i = retry[j];
      ++timeouts_seen[i];
      outcomes[i] = std::move(again[j]);
    }
  }
  for (std::size_t i = 0; i < configs.size(); ++i)
    if (timeouts_seen[i] > 0) {
      const std::string tries = std::to_string(timeouts_seen[i] + 1) + " attempts";
      outcomes[i].message = outcomes[i].status == MeasureStatus::kTimeout
                                ? "timed out in all " + tries + ": " + outcomes[i].message
                                : "after " + std::to_string(timeouts_seen[i]) + " timeout(s)" +
                                      (outcomes[i].message.empty() ? "" : ": " + outcomes[i].message);
    }

  if (options_.confirm_best || options_.confirm_close_best > 0)
    result.confirmations += confirm_new_bests({kernel, space, model_, result.history}, configs, outcomes, best_seconds,
                                              measure_again, {options_.confirm_best, options_.confirm_close_best});
  for (std::size_t i = 0; i < configs.size(); ++i) outcomes[i].cost_seconds = total_cost[i];
  return outcomes;
}

SearchDeadline Tuner::round_deadline(const TuneResult& result, double loop_seconds, std::size_t k, double other_seconds) const {
  const double share = options_.search_time_share;
  if (!(share > 0 && share < 1)) return {};
  // Nothing measured yet prices nothing: the first search makes the strategy's configured effort
  // (its population and generations, its annealing steps), which bounds it. Its first picks are
  // what a model-driven tuner is for; searched with the minimum they are the model's best of a
  // random sample.
  if (result.history.size() == 0 && result.backend_configs == 0) return {};
  // The hardware time the measurements stand for: what the backend charged where it served them
  // without running them (an experiment's memo, a resumed log), else its wall time, so a run
  // searches alike whether or not its configs were measured before.
  const double hardware = std::max(result.backend_wall_seconds, result.hardware_seconds);
  const std::size_t configs = std::max(result.backend_configs, result.history.size());
  const double per_config = configs ? hardware / static_cast<double>(configs) : 0.0;
  const double hardware_after_round = hardware + per_config * static_cast<double>(k);
  const double allowed = share / (1 - share) * hardware_after_round;  // outside time at the target share
  const double spent = loop_seconds - result.backend_wall_seconds;
  return SearchDeadline::after(allowed - spent - other_seconds);
}

Tuner::Tuner(Backend& backend, Strategy& strategy, CostModel* model, RecordLog* log, TunerOptions options)
    : backend_(backend), strategy_(strategy), model_(model), log_(log), options_(std::move(options)) {}

TuneResult Tuner::run(const Kernel& kernel, const SearchSpace& space, const std::vector<Record>& logged,
                      const std::function<void(const RoundReport&)>& progress) {
  const auto start = std::chrono::steady_clock::now();
  if (!(options_.max_hardware_seconds >= 0))
    throw std::invalid_argument("the hardware-seconds budget must be a non-negative number");
  if (options_.max_measurements == 0 && options_.max_hardware_seconds == 0)
    throw std::invalid_argument("the budget is zero: give a positive number of measurements and/or hardware seconds");
  if (!(options_.epsilon >= 0 && options_.epsilon <= 1))
    throw std::invalid_argument("epsilon must be in [0, 1]");
  if (!(options_.confirm_close_best >= 0 && options_.confirm_close_best < 1))
    throw std::invalid_argument("the close-best confirmation margin must be in [0, 1)");
  if (!(options_.search_time_share >= 0 && options_.search_time_share <= 1))
    throw std::invalid_argument("the search time share must be in [0, 1]");
  if (strategy_.needs_model() && !model_)
    throw std::invalid_argument("strategy '" + strategy_.name() +
                                "' searches on a cost model, but the campaign has none; use a model-free strategy "
                                "(measured_annealing, measured_evolution, random, exhaustive) or give a model");
  // Counting a constrained space enumerates it: only a small one is counted here (a fusion space of
  // 20 edges would take 10^6 legality checks, seconds of loop time); a larger empty one fails at
  // its first sample().
  constexpr std::uint64_t kCountLimit = std::uint64_t{1} << 12;
  if (const auto size = space.size(kCountLimit); size && *size == 0)
    throw std::invalid_argument("the search space of kernel '" + kernel.name() + "' is empty: no config satisfies its constraints");

  const std::string device = backend_.fingerprint();
  const std::vector<std::string> knob_names = space.knob_names();
  std::unordered_map<Config, const Record*, ConfigHash> from_log;
  for (const Record& record : logged)
    if (record.kernel_key == kernel.key() && record.device == device)
      if (auto config = in_space_order(record, knob_names)) from_log.emplace(std::move(*config), &record);
  // An opaque kernel (known only by name and key) has no program to define; its records alone
  // describe it, and a definition line would not reproduce its key on load.
  if (log_ && kernel.body().size() > 0) log_->define_kernel(kernel, space);

  const std::size_t k_max = options_.top_k ? options_.top_k : default_top_k(options_.max_measurements);
  TuneResult result;
  History& history = result.history;
  std::size_t since_best = 0;
  double other_seconds = 0.0;  // the last round's time outside the backend and the strategy

  for (std::size_t round = 0;; ++round) {
    const auto round_start = std::chrono::steady_clock::now();
    const double backend_before = result.backend_wall_seconds, propose_before = result.propose_seconds;
    const std::size_t measured = history.size();
    if (options_.max_measurements && measured >= options_.max_measurements) {
      result.stop = StopReason::kMeasurementBudget;
      break;
    }
    if (options_.max_hardware_seconds > 0 && result.hardware_seconds >= options_.max_hardware_seconds) {
      result.stop = StopReason::kHardwareBudget;
      break;
    }
    if (options_.early_stopping && since_best >= options_.early_stopping) {
      result.stop = StopReason::kEarlyStopping;
      break;
    }
    std::size_t k = options_.ramp_batches && round < 32 ? std::min(k_max, std::size_t{1} << round) : k_max;
    // Every config to measure first fits in round 0, ramped or not: a ramp that starts at one config
    // would measure the default alone and never the compiler's heuristic.
    if (round == 0) k = std::max(k, std::min(k_max, options_.measure_first.size()));
    if (options_.max_measurements) k = std::min(k, options_.max_measurements - measured);

    // 1. The batch: configs to measure first, the model's picks among the strategy's proposals,
    //    then random configs (the epsilon share, and whatever the strategy could not fill).
    std::vector<Config> batch;
    std::unordered_set<Config, ConfigHash> in_batch;
    auto take = [&](const Config& config) {
      if (batch.size() < k && space.contains(config) && !history.contains(config) && in_batch.insert(config).second)
        batch.push_back(config);
    };
    if (round == 0)
      for (const Config& config : options_.measure_first) take(config);
    Rng rng = stream_rng({options_.seed, round, kEpsilonStream});
    const double expected_random = options_.epsilon * static_cast<double>(k - batch.size());
    const std::size_t n_random = static_cast<std::size_t>(std::floor(expected_random)) +
                                 (uniform_unit(rng) < expected_random - std::floor(expected_random) ? 1 : 0);
    const std::size_t greedy = k - batch.size() - std::min(n_random, k - batch.size());
    if (greedy > 0) {
      const SearchContext context{kernel, space, model_, history, options_.seed, round,
                                  round_deadline(result, seconds_since(start), k, other_seconds), options_.measure_first};
      const auto propose_start = std::chrono::steady_clock::now();
      // The model may ask for a wider pool to choose a diverse batch from (CostModel::choose_batch).
      std::vector<Config> proposed = strategy_.propose(context, model_ ? std::max(greedy, model_->proposal_pool(greedy)) : greedy);
      result.propose_seconds += seconds_since(propose_start);
      if (model_ && proposed.size() > 1) {
        const auto rank_start = std::chrono::steady_clock::now();
        proposed = rank_by_model(*model_, kernel, space, std::move(proposed));
        result.rank_seconds += seconds_since(rank_start);
      }
      if (model_) {
        const auto choose_start = std::chrono::steady_clock::now();
        proposed = model_->choose_batch(kernel, space, std::move(proposed), greedy, options_.seed, round,
                                        [&](const Config& config) { return history.contains(config) || in_batch.count(config) > 0; });
        result.rank_seconds += seconds_since(choose_start);
      }
      const std::size_t limit = batch.size() + greedy;
      for (const Config& config : proposed) {
        if (batch.size() >= limit) break;
        take(config);
      }
    }
    for (const Config& config : sample_unmeasured(space, history, batch, k - batch.size(), rng)) take(config);
    if (batch.empty()) {
      result.stop = StopReason::kSpaceExhausted;
      break;
    }

    // The strategy's own time so far (measured before the backend's, which is not its own).
    const double search_so_far = std::max(0.0, seconds_since(start) - result.backend_wall_seconds);
    // 2. Measure what the log does not already hold, in one backend call.
    std::vector<Config> to_measure;
    for (const Config& config : batch)
      if (!from_log.count(config)) to_measure.push_back(config);
    std::vector<MeasureResult> measured_now;
    if (!to_measure.empty()) {
      const auto best = history.best();
      measured_now = measure_robustly(kernel, space, to_measure,
                                      best ? history.entries()[*best].result.seconds : INFINITY, result);
    }

    // 3. Record, in batch order, and let the model learn.
    std::vector<Measurement> fresh;
    std::size_t next_measured = 0;
    for (const Config& config : batch) {
      MeasureResult outcome;
      if (const auto it = from_log.find(config); it != from_log.end()) {
        outcome = it->second->result;
        ++result.from_log;
      } else {
        outcome = std::move(measured_now[next_measured++]);
        if (log_) {
          const auto record_start = std::chrono::steady_clock::now();
          log_->append(Record{device, kernel.key(), kernel.name(), knob_names, config, outcome, unix_now()});
          result.record_seconds += seconds_since(record_start);
        }
      }
      auto best_seconds = [&history]() -> std::optional<double> {
        if (const auto best = history.best()) return history.entries()[*best].result.seconds;
        return std::nullopt;
      };
      const double before = best_seconds().value_or(INFINITY);
      result.hardware_seconds += outcome.cost_seconds;
      if (!outcome.ok()) {
        ++result.failed;
        ++result.failed_by_status[outcome.status];
        result.quarantined.push_back(config);
      }
      fresh.push_back(Measurement{config, outcome});
      history.add(config, std::move(outcome));
      result.best_after.push_back(best_seconds());
      result.search_after.push_back(search_so_far);
      since_best = best_seconds().value_or(INFINITY) < before ? 0 : since_best + 1;
    }
    if (model_) {
      const auto update_start = std::chrono::steady_clock::now();
      model_->update(kernel, space, fresh);
      result.update_seconds += seconds_since(update_start);
    }
    result.rounds = round + 1;
    other_seconds = std::max(0.0, seconds_since(round_start) - (result.backend_wall_seconds - backend_before) -
                                      (result.propose_seconds - propose_before));
    if (progress) {
      progress(RoundReport{round, history.size(), result.hardware_seconds, result.best_after.back(), result.failed});
    }
  }
  result.wall_seconds = seconds_since(start);
  return result;
}

}  // namespace perftune
