#include "experiments/live/remeasurement.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <functional>
#include <iterator>
#include <map>
#include <set>

#include "experiments/scoring/random_baseline.h"
#include "experiments/scoring/speedup_curves.h"
#include "hardware/timing/sample_timer.h"
#include "ir/record_log.h"

namespace perftune {

namespace {

// Random search within this many round spreads of f_opt is at the optimum as far as the
// re-measurement can tell; a spread is taken as at least 1% (a few repeats of a microsecond kernel
// can agree more closely than its runtime does from one minute to the next).
constexpr double kTiedSpreads = 2.0;
constexpr double kMinimumRoundSpread = 0.01;

// The noise ceiling's pick (remeasurement.h): each round stands for a sitting in which runs measured
// the kNoiseCeilingConfigs fastest configs once and kept the fastest figure; the config kept is
// valued at the mean of its other rounds, since the round that chose it is its luckiest. The mean
// over rounds; empty with fewer than two rounds or no config valid in every round.
std::optional<double> noise_ceiling_pick(const std::vector<std::optional<double>>& values,
                                         const std::vector<std::vector<MeasureResult>>& rounds) {
  std::size_t repeats = 0;
  for (const auto& config_rounds : rounds) repeats = std::max(repeats, config_rounds.size());
  if (repeats < 2) return std::nullopt;
  std::vector<std::size_t> fastest;
  for (std::size_t i = 0; i < rounds.size(); ++i)
    if (values[i] && rounds[i].size() == repeats && std::all_of(rounds[i].begin(), rounds[i].end(), [](const MeasureResult& r) { return r.ok(); }))
      fastest.push_back(i);
  if (fastest.empty()) return std::nullopt;
  std::sort(fastest.begin(), fastest.end(), [&](std::size_t a, std::size_t b) { return *values[a] < *values[b]; });
  fastest.resize(std::min(fastest.size(), kNoiseCeilingConfigs));
  std::vector<double> picks;
  for (std::size_t round = 0; round < repeats; ++round) {
    const std::size_t kept = *std::min_element(fastest.begin(), fastest.end(), [&](std::size_t a, std::size_t b) {
      return rounds[a][round].seconds < rounds[b][round].seconds;
    });
    double others = 0;
    for (std::size_t other = 0; other < repeats; ++other)
      if (other != round) others += rounds[kept][other].seconds;
    picks.push_back(others / static_cast<double>(repeats - 1));
  }
  return mean(picks);
}

// P averaged over `spaces` per budget and over all, of the per-budget scores `scores_of` finds in
// a space (null: none there): {"score", "score_at", "spaces_at"}.
nlohmann::ordered_json averaged_over_spaces(const std::vector<nlohmann::ordered_json>& spaces, const std::vector<std::size_t>& budgets,
                                            const std::function<const nlohmann::ordered_json*(const nlohmann::ordered_json&)>& scores_of) {
  std::vector<double> all;
  nlohmann::ordered_json score_at = nlohmann::ordered_json::object(), spaces_at = nlohmann::ordered_json::object();
  for (const std::size_t b : budgets) {
    const std::string key = std::to_string(b);
    std::vector<double> at_budget;
    for (const nlohmann::ordered_json& space : spaces) {
      const nlohmann::ordered_json* scores = scores_of(space);
      if (scores && scores->contains(key) && !(*scores)[key].is_null()) at_budget.push_back((*scores)[key].get<double>());
    }
    all.insert(all.end(), at_budget.begin(), at_budget.end());
    spaces_at[key] = at_budget.size();
    score_at[key] = at_budget.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(mean(at_budget));
  }
  return {{"score", all.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(mean(all))},
          {"score_at", std::move(score_at)},
          {"spaces_at", std::move(spaces_at)}};
}

}  // namespace

LiveRun live_run(std::size_t strategy, bool random, const std::vector<std::pair<Config, MeasureResult>>& records,
                 const std::vector<std::optional<double>>& best_after, const std::vector<std::size_t>& budgets) {
  LiveRun run{strategy, random, {}, {}};
  for (const auto& [config, result] : records)
    if (result.ok()) run.measured.emplace_back(config, result.seconds);
  for (const std::size_t b : budgets) {
    const std::optional<double> best = best_after.empty() ? std::nullopt : best_after[std::min(b, best_after.size()) - 1];
    if (!best || run.measured.empty()) {
      run.best_at.emplace_back();
      continue;
    }
    const auto closest = std::min_element(run.measured.begin(), run.measured.end(), [&](const auto& x, const auto& y) {
      return std::abs(x.second - *best) < std::abs(y.second - *best);
    });
    run.best_at.emplace_back(closest->first);
  }
  return run;
}

std::vector<Config> remeasure_candidates(const std::vector<LiveRun>& runs, std::size_t top) {
  std::vector<Config> configs;
  std::set<Config> seen;
  for (const LiveRun& run : runs)
    for (const auto& config : run.best_at)
      if (config && seen.insert(*config).second) configs.push_back(*config);
  std::map<Config, double> fastest;  // each config's fastest measurement in any run
  for (const LiveRun& run : runs)
    for (const auto& [config, seconds] : run.measured) {
      const auto [it, inserted] = fastest.emplace(config, seconds);
      if (!inserted) it->second = std::min(it->second, seconds);
    }
  std::vector<std::pair<double, Config>> by_time;
  for (const auto& [config, seconds] : fastest) by_time.emplace_back(seconds, config);
  std::sort(by_time.begin(), by_time.end());
  for (std::size_t i = 0; i < by_time.size() && i < top; ++i)
    if (seen.insert(by_time[i].second).second) configs.push_back(by_time[i].second);
  return configs;
}

std::vector<std::pair<Config, MeasureResult>> space_records(const std::string& path, const std::string& kernel_key,
                                                            const std::vector<std::string>& knob_names) {
  std::vector<std::pair<Config, MeasureResult>> records;
  for (const Record& record : RecordLog::load(path).records)
    if (record.kernel_key == kernel_key)
      if (std::optional<Config> config = in_space_order(record, knob_names)) records.emplace_back(std::move(*config), record.result);
  return records;
}

LiveRun reference_run(const std::string& reference, const std::string& space, const std::string& kernel_key,
                      const std::vector<std::string>& knob_names) {
  const std::filesystem::path folder = std::filesystem::path(reference) / "runs" / space;
  if (!std::filesystem::is_directory(folder)) return {};
  std::vector<std::string> logs;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(folder))
    if (entry.path().filename() == "records.jsonl" && entry.path().string().find(kStaleRunMarker) == std::string::npos)
      logs.push_back(entry.path().string());
  std::sort(logs.begin(), logs.end());  // the same candidates whatever order the directory lists
  std::vector<std::pair<Config, MeasureResult>> records;
  for (const std::string& log : logs) {
    std::vector<std::pair<Config, MeasureResult>> more = space_records(log, kernel_key, knob_names);
    records.insert(records.end(), std::make_move_iterator(more.begin()), std::make_move_iterator(more.end()));
  }
  return live_run(0, false, records, {}, {});  // no curve: its measurements alone
}

nlohmann::ordered_json remeasured_scores(const std::vector<LiveRun>& runs, const std::vector<Config>& configs,
                                         const std::vector<std::optional<double>>& values,
                                         const std::vector<std::vector<MeasureResult>>& rounds,
                                         const std::vector<std::string>& strategies, const std::vector<std::size_t>& budgets) {
  std::map<Config, double> value_of;
  std::vector<double> ok;
  for (std::size_t i = 0; i < configs.size(); ++i)
    if (values[i]) {
      value_of.emplace(configs[i], *values[i]);
      ok.push_back(*values[i]);
    }
  nlohmann::ordered_json out;
  out["configs"] = configs.size();
  out["repeats"] = rounds.empty() ? 0 : std::max_element(rounds.begin(), rounds.end(), [](const auto& a, const auto& b) {
                                          return a.size() < b.size();
                                        })->size();
  std::vector<double> spreads;
  for (const auto& config_rounds : rounds) {
    std::vector<double> times;
    for (const MeasureResult& result : config_rounds)
      if (result.ok()) times.push_back(result.seconds);
    if (times.size() >= 2) spreads.push_back(robust_cv(times));
  }
  const std::optional<double> round_spread = spreads.empty() ? std::nullopt : std::optional(quantile(spreads, 0.5));
  out["round_spread"] = round_spread ? nlohmann::ordered_json(*round_spread) : nlohmann::ordered_json(nullptr);
  if (ok.empty()) {
    out["optimum_seconds"] = nullptr;
    out["strategies"] = nlohmann::ordered_json::object();
    return out;
  }
  const double optimum = *std::min_element(ok.begin(), ok.end());
  const double slowest = *std::max_element(ok.begin(), ok.end());
  out["optimum_seconds"] = optimum;
  // The runs' own f_opt and what its config re-measures at: how lucky that one draw was.
  const std::pair<Config, double>* measured_best = nullptr;
  for (const LiveRun& run : runs)
    for (const auto& measured : run.measured)
      if (!measured_best || measured.second < measured_best->second) measured_best = &measured;
  if (measured_best) {
    out["measured_optimum_seconds"] = measured_best->second;
    const auto it = value_of.find(measured_best->first);
    out["measured_optimum_remeasured_seconds"] = it == value_of.end() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(it->second);
  }
  // Each run's pick at each budget, valued at its re-measured runtime.
  const auto valued = [&](const LiveRun& run, std::size_t i) {
    if (!run.best_at[i]) return slowest;
    const auto it = value_of.find(*run.best_at[i]);
    return it == value_of.end() ? slowest : it->second;
  };
  // f_random(b) within the noise of f_opt leaves nothing to standardize: P there would be the
  // noise of a difference smaller than it (the re-measured heuristic is often the optimum).
  const double noise = std::max(kMinimumRoundSpread, round_spread.value_or(0.0));
  std::vector<std::optional<double>> random_at(budgets.size());
  nlohmann::ordered_json random_within_noise = nlohmann::ordered_json::array();
  for (std::size_t i = 0; i < budgets.size(); ++i) {
    std::vector<double> picks;
    for (const LiveRun& run : runs)
      if (run.random) picks.push_back(valued(run, i));
    if (picks.empty()) continue;
    if (mean(picks) < optimum * (1.0 + kTiedSpreads * noise)) random_within_noise.push_back(budgets[i]);
    else random_at[i] = mean(picks);
  }
  out["random_within_noise_at"] = std::move(random_within_noise);
  const std::optional<double> ceiling_pick = noise_ceiling_pick(values, rounds);
  out["noise_ceiling_pick_seconds"] = ceiling_pick ? nlohmann::ordered_json(*ceiling_pick) : nlohmann::ordered_json(nullptr);
  nlohmann::ordered_json ceiling_at = nlohmann::ordered_json::object();
  for (std::size_t i = 0; i < budgets.size(); ++i) {
    std::optional<double> p;
    if (random_at[i] && ceiling_pick) p = standardized_score(*random_at[i], *ceiling_pick, optimum);
    ceiling_at[std::to_string(budgets[i])] = p ? nlohmann::ordered_json(*p) : nlohmann::ordered_json(nullptr);
  }
  out["noise_ceiling_at"] = std::move(ceiling_at);
  nlohmann::ordered_json per_strategy = nlohmann::ordered_json::object();
  for (std::size_t t = 0; t < strategies.size(); ++t) {
    nlohmann::ordered_json score_at = nlohmann::ordered_json::object(), pick_seconds_at = nlohmann::ordered_json::object();
    std::vector<double> scored;
    for (std::size_t i = 0; i < budgets.size(); ++i) {
      std::vector<double> picks;
      for (const LiveRun& run : runs)
        if (run.strategy == t) picks.push_back(valued(run, i));
      pick_seconds_at[std::to_string(budgets[i])] = picks.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(mean(picks));
      std::optional<double> p;
      if (random_at[i] && !picks.empty()) p = standardized_score(*random_at[i], mean(picks), optimum);
      score_at[std::to_string(budgets[i])] = p ? nlohmann::ordered_json(*p) : nlohmann::ordered_json(nullptr);
      if (p) scored.push_back(*p);
    }
    per_strategy[strategies[t]] = {{"score_at", score_at},
                                   {"pick_seconds_at", pick_seconds_at},
                                   {"mean_score", scored.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(mean(scored))}};
  }
  out["strategies"] = std::move(per_strategy);
  return out;
}

void add_remeasured_scores(nlohmann::ordered_json& strategy_table, const std::vector<nlohmann::ordered_json>& spaces,
                           const std::vector<std::size_t>& budgets) {
  if (spaces.empty()) return;
  for (auto& [name, row] : strategy_table.items()) {
    nlohmann::ordered_json averaged = averaged_over_spaces(spaces, budgets, [&](const nlohmann::ordered_json& space) {
      const bool has = space.contains("strategies") && space["strategies"].contains(name);
      return has ? &space["strategies"][name]["score_at"] : nullptr;
    });
    row["remeasured_score"] = std::move(averaged["score"]);
    row["remeasured_score_at"] = std::move(averaged["score_at"]);
    row["remeasured_spaces_at"] = std::move(averaged["spaces_at"]);
  }
}

nlohmann::ordered_json remeasured_noise_ceiling(const std::vector<nlohmann::ordered_json>& spaces, const std::vector<std::size_t>& budgets) {
  return averaged_over_spaces(spaces, budgets, [](const nlohmann::ordered_json& space) {
    return space.contains("noise_ceiling_at") ? &space["noise_ceiling_at"] : nullptr;
  });
}

}  // namespace perftune
