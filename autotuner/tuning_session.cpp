#include "autotuner/tuning_session.h"

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

// An ok result whose time is not a valid runtime becomes a runtime_error saying why.
MeasureResult validated(MeasureResult outcome) {
  if (outcome.ok() && runtime_problem(outcome.seconds))
    return MeasureResult::failure(MeasureStatus::kRuntimeError,
                                  "backend reported an invalid runtime: " + *runtime_problem(outcome.seconds),
                                  outcome.cost_seconds);
  return outcome;
}

void check_options(const TunerOptions& options, const Strategy& strategy, const CostModel* model) {
  if (!(options.max_hardware_seconds >= 0))
    throw std::invalid_argument("the hardware-seconds budget must be a non-negative number");
  if (options.max_measurements == 0 && options.max_hardware_seconds == 0)
    throw std::invalid_argument("the budget is zero: give a positive number of measurements and/or hardware seconds");
  if (!(options.epsilon >= 0 && options.epsilon <= 1)) throw std::invalid_argument("epsilon must be in [0, 1]");
  if (!(options.confirm_close_best >= 0 && options.confirm_close_best < 1))
    throw std::invalid_argument("the close-best confirmation margin must be in [0, 1)");
  if (!(options.search_time_share >= 0 && options.search_time_share <= 1))
    throw std::invalid_argument("the search time share must be in [0, 1]");
  if (strategy.needs_model() && !model)
    throw std::invalid_argument("strategy '" + strategy.name() +
                                "' searches on a cost model, but the campaign has none; use a model-free strategy "
                                "(measured_annealing, measured_evolution, random, exhaustive) or give a model");
}

}  // namespace

TuningSession::TuningSession(Backend& backend, Strategy& strategy, CostModel* model, RecordLog* log, TunerOptions options,
                             const Kernel& kernel, const SearchSpace& space, const std::vector<Record>& logged, const Clock& clock)
    : backend_(backend), strategy_(strategy), model_(model), log_(log), options_(std::move(options)), batch_policy_(options_.batch_policy),
      kernel_(kernel), space_(space), clock_(clock) {
  const double start = clock_.now_seconds();
  check_options(options_, strategy_, model_);
  // Counting a constrained space enumerates it: only a small one is counted here (a fusion space of
  // 20 edges would take 10^6 legality checks, seconds of loop time); a larger empty one fails at
  // its first sample().
  constexpr std::uint64_t kCountLimit = std::uint64_t{1} << 12;
  if (const auto size = space_.size(kCountLimit); size && *size == 0)
    throw std::invalid_argument("the search space of kernel '" + kernel_.name() + "' is empty: no config satisfies its constraints");

  device_ = backend_.fingerprint();
  knob_names_ = space_.knob_names();
  std::vector<Measurement> adopted;
  for (const Record& record : logged)
    if (record.kernel_key == kernel_.key() && record.device == device_)
      if (auto config = in_space_order(record, knob_names_)) {
        if (options_.adopt_logged && space_.contains(*config) && !result_.history.contains(*config)) {
          ++result_.from_log;
          account(*config, record.result, 0.0, adopted);
        }
        from_log_.emplace(std::move(*config), &record);
      }
  if (!adopted.empty())
    for (CostModel* model : learning_models()) model->update(kernel_, space_, adopted);
  // An opaque kernel (known only by name and key) has no program to define; its records alone
  // describe it, and a definition line would not reproduce its key on load.
  if (log_ && kernel_.body().size() > 0) log_->define_kernel(kernel_, space_);
  k_max_ = options_.top_k ? options_.top_k : default_top_k(options_.max_measurements);
  result_.wall_seconds = seconds_since(start);
}

std::optional<double> TuningSession::best_seconds() const {
  if (const auto best = result_.history.best()) return result_.history.entries()[*best].result.seconds;
  return std::nullopt;
}

std::vector<CostModel*> TuningSession::learning_models() const {
  std::vector<CostModel*> models;
  if (model_) models.push_back(model_);
  for (CostModel* model : strategy_.learning_models()) models.push_back(model);
  return models;
}

RoundReport TuningSession::report() const {
  return RoundReport{round_ ? round_ - 1 : 0, result_.history.size(), result_.hardware_seconds,
                     result_.best_after.empty() ? std::nullopt : result_.best_after.back(), result_.failed};
}

std::vector<MeasureResult> TuningSession::measure_once(const std::vector<Config>& configs) {
  const double backend_start = clock_.now_seconds();
  std::vector<MeasureResult> measured = backend_.measure(kernel_, space_, configs);
  result_.backend_wall_seconds += seconds_since(backend_start);
  result_.backend_configs += configs.size();
  if (measured.size() != configs.size())
    throw std::runtime_error("backend " + backend_.fingerprint() + " returned " + std::to_string(measured.size()) +
                             " results for " + std::to_string(configs.size()) + " configs");
  for (MeasureResult& outcome : measured) outcome = validated(std::move(outcome));
  return measured;
}

std::vector<MeasureResult> TuningSession::measure_robustly(const std::vector<Config>& configs, double best_seconds) {
  std::vector<MeasureResult> outcomes = measure_once(configs);
  // Every attempt's hardware time is charged to the config's final result.
  std::vector<double> total_cost(configs.size());
  for (std::size_t i = 0; i < configs.size(); ++i) total_cost[i] = outcomes[i].cost_seconds;
  auto measure_again = [&](const std::vector<std::size_t>& which) {
    std::vector<Config> again;
    for (std::size_t i : which) again.push_back(configs[i]);
    std::vector<MeasureResult> measured = measure_once(again);
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
    result_.retries += retry.size();
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
    result_.confirmations += confirm_new_bests({kernel_, space_, model_, result_.history}, configs, outcomes, best_seconds,
                                               measure_again, {options_.confirm_best, options_.confirm_close_best});
  for (std::size_t i = 0; i < configs.size(); ++i) outcomes[i].cost_seconds = total_cost[i];
  return outcomes;
}

SearchDeadline TuningSession::round_deadline(double loop_seconds, std::size_t k) const {
  const double share = options_.search_time_share;
  if (!(share > 0 && share < 1)) return {};
  // Nothing measured yet prices nothing: the first search makes the strategy's configured effort
  // (its population and generations, its annealing steps), which bounds it. Its first picks are
  // what a model-driven tuner is for; searched with the minimum they are the model's best of a
  // random sample.
  if (result_.history.size() == 0 && result_.backend_configs == 0) return {};
  // The hardware time the measurements stand for: what the backend charged where it served them
  // without running them (an experiment's memo, a resumed log), else its wall time, so a run
  // searches alike whether or not its configs were measured before.
  const double hardware = std::max(result_.backend_wall_seconds, result_.hardware_seconds);
  const std::size_t configs = std::max(result_.backend_configs, result_.history.size());
  const double per_config = configs ? hardware / static_cast<double>(configs) : 0.0;
  const double hardware_after_round = hardware + per_config * static_cast<double>(k);
  const double allowed = share / (1 - share) * hardware_after_round;  // outside time at the target share
  const double spent = loop_seconds - result_.backend_wall_seconds;
  return SearchDeadline::after(allowed - spent - other_seconds_, clock_);
}

void TuningSession::account(const Config& config, MeasureResult outcome, double search_so_far, std::vector<Measurement>& fresh) {
  const double before = best_seconds().value_or(INFINITY);
  result_.hardware_seconds += outcome.cost_seconds;
  if (!outcome.ok()) {
    ++result_.failed;
    ++result_.failed_by_status[outcome.status];
    result_.quarantined.push_back(config);
  }
  fresh.push_back(Measurement{config, outcome});
  result_.history.add(config, std::move(outcome));
  result_.best_after.push_back(best_seconds());
  result_.search_after.push_back(search_so_far);
  since_best_ = best_seconds().value_or(INFINITY) < before ? 0 : since_best_ + 1;
}

bool TuningSession::stop(StopReason reason, const RoundStart& start) {
  result_.stop = reason;
  stopped_ = true;
  result_.wall_seconds = loop_seconds(start);
  return false;
}

std::optional<StopReason> TuningSession::budget_stop() const {
  const std::size_t measured = result_.history.size();
  if (options_.max_measurements && measured >= options_.max_measurements) return StopReason::kMeasurementBudget;
  if (options_.max_hardware_seconds > 0 && result_.hardware_seconds >= options_.max_hardware_seconds)
    return StopReason::kHardwareBudget;
  if (options_.early_stopping && since_best_ >= options_.early_stopping) return StopReason::kEarlyStopping;
  return std::nullopt;
}

std::size_t TuningSession::round_size(std::size_t at_most) const {
  const std::size_t round = round_;
  const std::size_t measured = result_.history.size();
  std::size_t k = options_.ramp_batches && round < 32 ? std::min(k_max_, std::size_t{1} << round) : k_max_;
  // Every config to measure first fits in round 0, ramped or not: a ramp that starts at one config
  // would measure the default alone and never the compiler's heuristic.
  if (round == 0) k = std::max(k, std::min(k_max_, options_.measure_first.size()));
  if (options_.max_measurements) k = std::min(k, options_.max_measurements - measured);
  return std::min(k, at_most);
}

// 1. The batch: configs to measure first, the model's picks among the strategy's proposals,
//    then random configs (the epsilon share, and whatever the strategy could not fill).
std::vector<Config> TuningSession::choose_batch(std::size_t k, const RoundStart& start) {
  const std::size_t round = round_;
  const History& history = result_.history;
  std::vector<Config> batch;
  std::unordered_set<Config, ConfigHash> in_batch;
  auto take = [&](const Config& config) {
    if (batch.size() < k && space_.contains(config) && !history.contains(config) && in_batch.insert(config).second)
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
    const std::vector<Config> proposed = greedy_picks(greedy, k, start, in_batch);
    const std::size_t limit = batch.size() + greedy;
    for (const Config& config : proposed) {
      if (batch.size() >= limit) break;
      take(config);
    }
  }
  for (const Config& config : sample_unmeasured(space_, history, batch, k - batch.size(), rng)) take(config);
  return batch;
}

std::vector<Config> TuningSession::greedy_picks(std::size_t greedy, std::size_t k, const RoundStart& start,
                                                const std::unordered_set<Config, ConfigHash>& in_batch) {
  const std::size_t round = round_;
  const History& history = result_.history;
  const SearchContext context{kernel_, space_, model_, history, options_.seed, round,
                              round_deadline(loop_seconds(start), k), options_.measure_first};
  const double propose_start = clock_.now_seconds();
  // The batch policy may ask for a wider pool to choose a diverse batch from.
  std::vector<Config> proposed = strategy_.propose(context, model_ ? std::max(greedy, batch_policy_.pool(greedy)) : greedy);
  result_.propose_seconds += seconds_since(propose_start);
  if (model_ && proposed.size() > 1) {
    const double rank_start = clock_.now_seconds();
    proposed = rank_by_model(*model_, kernel_, space_, std::move(proposed));
    result_.rank_seconds += seconds_since(rank_start);
  }
  if (model_) {
    const double choose_start = clock_.now_seconds();
    proposed = batch_policy_.choose(model_, kernel_, space_, std::move(proposed), greedy, options_.seed, round,
                                    [&](const Config& config) { return history.contains(config) || in_batch.count(config) > 0; });
    result_.rank_seconds += seconds_since(choose_start);
  }
  return proposed;
}

// 2. Measure what the log does not already hold, in one backend call.
std::vector<MeasureResult> TuningSession::measure_unlogged(const std::vector<Config>& batch) {
  std::vector<Config> to_measure;
  for (const Config& config : batch)
    if (!from_log_.count(config)) to_measure.push_back(config);
  std::vector<MeasureResult> measured_now;
  if (!to_measure.empty()) measured_now = measure_robustly(to_measure, best_seconds().value_or(INFINITY));
  return measured_now;
}

// 3. Record, in batch order: the log's results as they were, the backend's appended to the log.
std::vector<Measurement> TuningSession::record_batch(const std::vector<Config>& batch, std::vector<MeasureResult> measured_now,
                                                     double search_so_far) {
  std::vector<Measurement> fresh;
  std::size_t next_measured = 0;
  for (const Config& config : batch) {
    MeasureResult outcome;
    if (const auto it = from_log_.find(config); it != from_log_.end()) {
      outcome = it->second->result;
      ++result_.from_log;
    } else {
      outcome = std::move(measured_now[next_measured++]);
      if (log_) {
        const double record_start = clock_.now_seconds();
        log_->append(Record{device_, kernel_.key(), kernel_.name(), knob_names_, config, outcome, unix_now()});
        result_.record_seconds += seconds_since(record_start);
      }
    }
    account(config, std::move(outcome), search_so_far, fresh);
  }
  return fresh;
}

// 4. Let the models learn from the round's measurements.
void TuningSession::update_models(const std::vector<Measurement>& fresh) {
  if (const std::vector<CostModel*> models = learning_models(); !models.empty()) {
    const double update_start = clock_.now_seconds();
    for (CostModel* model : models) model->update(kernel_, space_, fresh);
    result_.update_seconds += seconds_since(update_start);
  }
}

bool TuningSession::step(std::size_t at_most) {
  if (stopped_) return false;
  const double round_start = clock_.now_seconds();
  const RoundStart start{.active_before = result_.wall_seconds, .at = round_start};
  const double backend_before = result_.backend_wall_seconds, propose_before = result_.propose_seconds;
  if (const std::optional<StopReason> reason = budget_stop()) return stop(*reason, start);
  const std::size_t k = round_size(at_most);
  if (k == 0) return stop(StopReason::kMeasurementBudget, start);

  const std::vector<Config> batch = choose_batch(k, start);
  if (batch.empty()) return stop(StopReason::kSpaceExhausted, start);

  // The strategy's own time so far (measured before the backend's, which is not its own).
  const double search_so_far = std::max(0.0, loop_seconds(start) - result_.backend_wall_seconds);
  std::vector<MeasureResult> measured_now = measure_unlogged(batch);
  const std::vector<Measurement> fresh = record_batch(batch, std::move(measured_now), search_so_far);
  update_models(fresh);
  result_.rounds = ++round_;
  other_seconds_ = std::max(0.0, seconds_since(round_start) - (result_.backend_wall_seconds - backend_before) -
                                     (result_.propose_seconds - propose_before));
  result_.wall_seconds = loop_seconds(start);
  return true;
}

}  // namespace perftune
