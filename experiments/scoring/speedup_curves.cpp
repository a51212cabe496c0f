#include "experiments/scoring/speedup_curves.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace perftune {

namespace {

nlohmann::ordered_json number_or_null(const std::optional<double>& value) {
  return value && std::isfinite(*value) ? nlohmann::ordered_json(*value) : nlohmann::ordered_json(nullptr);
}

// Sample variance (n - 1 in the denominator) of at least two values.
double sample_variance(const std::vector<double>& sample) {
  const double centre = mean(sample);
  double sum = 0.0;
  for (double v : sample) sum += (v - centre) * (v - centre);
  return sum / static_cast<double>(sample.size() - 1);
}

}  // namespace

nlohmann::ordered_json standard_error(const std::vector<std::pair<double, const std::vector<double>*>>& weighted) {
  double variance = 0.0;
  for (const auto& [weight, per_run] : weighted) {
    if (weight == 0.0) continue;
    if (per_run->size() < 2) return nullptr;
    variance += weight * weight * sample_variance(*per_run) / static_cast<double>(per_run->size());
  }
  return std::sqrt(variance);
}

double best_at(const RunCurve& run, const RecordedValues& values, std::size_t b) {
  if (run.best_after.empty()) return values.no_runtime_value();
  const std::optional<double>& best = run.best_after[std::min(b, run.best_after.size()) - 1];
  return best ? *best : values.no_runtime_value();
}

double mean(const std::vector<double>& sample) {
  double sum = 0.0;
  for (double v : sample) sum += v;
  return sum / static_cast<double>(sample.size());
}

std::vector<std::size_t> scored_budgets(const std::vector<std::size_t>& report_budgets, std::size_t max_budget) {
  std::vector<std::size_t> scored;
  for (std::size_t b : report_budgets)
    if (b >= 1 && b <= max_budget) scored.push_back(b);
  return scored;
}

double quantile(std::vector<double> sample, double q) {
  if (sample.empty()) throw std::invalid_argument("quantile of an empty sample");
  std::sort(sample.begin(), sample.end());
  const double position = q * static_cast<double>(sample.size() - 1);
  const std::size_t low = static_cast<std::size_t>(std::floor(position));
  const std::size_t high = std::min(low + 1, sample.size() - 1);
  return sample[low] + (position - static_cast<double>(low)) * (sample[high] - sample[low]);
}

nlohmann::ordered_json summarize_curves(const std::vector<SpaceBaseline>& spaces, const std::vector<std::string>& strategies,
                                        const std::vector<RunCurve>& runs, std::size_t max_budget,
                                        const std::vector<std::size_t>& report_budgets) {
  const std::vector<std::size_t> scored = scored_budgets(report_budgets, max_budget);

  // Per strategy: P at each scored budget for each space; log median speedups per report budget.
  std::vector<std::vector<std::vector<double>>> scores(strategies.size(), std::vector<std::vector<double>>(spaces.size()));
  // Per strategy and space: each run's mean P over the scored budgets (for the standard errors).
  std::vector<std::vector<std::vector<double>>> run_scores(strategies.size(), std::vector<std::vector<double>>(spaces.size()));
  std::vector<std::vector<std::vector<double>>> log_speedups(strategies.size(),
                                                             std::vector<std::vector<double>>(scored.size()));

  nlohmann::ordered_json space_list = nlohmann::ordered_json::array();
  for (std::size_t s = 0; s < spaces.size(); ++s) {
    const SpaceBaseline& space = spaces[s];
    const RecordedValues& values = space.values;
    const bool has_default = space.default_seconds.has_value();
    const double reference = has_default ? *space.default_seconds : values.median();
    nlohmann::ordered_json entry;
    entry["name"] = space.name;
    entry["kernel"] = space.kernel;
    entry["device"] = space.device;
    entry["live"] = space.live;
    if (!space.live) {
      entry["configs"] = values.size();
      entry["failed"] = values.failed;
    }
    entry["optimum_seconds"] = values.optimum();  // live: the best any run measured
    entry["optimum_noise"] = to_json(space.noise);
    entry["default_seconds"] = number_or_null(space.default_seconds);
    entry["reference"] = has_default ? "default" : "median";
    entry["reference_seconds"] = reference;
    std::vector<std::optional<double>> random_curve(max_budget);
    for (std::size_t b = 1; b <= max_budget; ++b) {
      if (!space.live) random_curve[b - 1] = expected_random_best(values, b);
      else if (!space.measured_random.empty())
        random_curve[b - 1] = space.measured_random[std::min(b, space.measured_random.size()) - 1];
    }
    entry["random_baseline"] = !space.live ? "exact" : space.measured_random.empty() ? "none" : "measured";
    entry["random_expected_best"] = nlohmann::ordered_json::array();
    for (const auto& value : random_curve) entry["random_expected_best"].push_back(number_or_null(value));

    nlohmann::ordered_json per_strategy;
    for (std::size_t t = 0; t < strategies.size(); ++t) {
      std::vector<const RunCurve*> mine;
      for (const RunCurve& run : runs)
        if (run.space == s && run.strategy == t) mine.push_back(&run);
      if (mine.empty())
        throw std::invalid_argument("no run of strategy " + strategies[t] + " on space " + space.name);
      nlohmann::ordered_json curve;
      curve["runs"] = mine.size();
      std::vector<double> best_mean, best_median, best_q25, best_q75, speedup_mean, speedup_median, speedup_q25, speedup_q75,
          hardware_median;
      nlohmann::ordered_json score_curve = nlohmann::ordered_json::array();
      std::vector<double>& per_run = run_scores[t][s];
      per_run.assign(mine.size(), 0.0);  // sums of each run's P over the scored budgets
      for (std::size_t b = 1; b <= max_budget; ++b) {
        std::vector<double> best, speedup, hardware;
        for (const RunCurve* run : mine) {
          best.push_back(best_at(*run, values, b));
          speedup.push_back(reference / best.back());
          if (!run->hardware_after.empty()) hardware.push_back(run->hardware_after[std::min(b, run->hardware_after.size()) - 1]);
        }
        best_mean.push_back(mean(best));
        best_median.push_back(quantile(best, 0.5));
        best_q25.push_back(quantile(best, 0.25));
        best_q75.push_back(quantile(best, 0.75));
        speedup_mean.push_back(mean(speedup));
        speedup_median.push_back(quantile(speedup, 0.5));
        speedup_q25.push_back(quantile(speedup, 0.25));
        speedup_q75.push_back(quantile(speedup, 0.75));
        hardware_median.push_back(hardware.empty() ? 0.0 : quantile(hardware, 0.5));
        std::optional<double> p;
        if (random_curve[b - 1]) p = standardized_score(*random_curve[b - 1], best_mean.back(), values.optimum());
        score_curve.push_back(number_or_null(p));
        for (std::size_t i = 0; i < scored.size(); ++i) {
          if (scored[i] != b) continue;
          if (p) {
            scores[t][s].push_back(*p);
            // Defined wherever p is: the same f_random and f_opt standardize each run's best.
            for (std::size_t r = 0; r < mine.size(); ++r)
              per_run[r] += *standardized_score(*random_curve[b - 1], best[r], values.optimum());
          }
          log_speedups[t][i].push_back(std::log(speedup_median.back()));
        }
      }
      curve["best_mean"] = best_mean;
      curve["best_median"] = best_median;
      curve["best_q25"] = best_q25;
      curve["best_q75"] = best_q75;
      curve["speedup_mean"] = speedup_mean;
      curve["speedup_median"] = speedup_median;
      curve["speedup_q25"] = speedup_q25;
      curve["speedup_q75"] = speedup_q75;
      curve["hardware_seconds_median"] = hardware_median;
      curve["score"] = std::move(score_curve);
      curve["mean_score"] = scores[t][s].empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(mean(scores[t][s]));
      const std::size_t budgets = scores[t][s].size();
      if (budgets > 0)
        for (double& sum : per_run) sum /= static_cast<double>(budgets);
      curve["mean_score_standard_error"] = budgets == 0 ? nlohmann::ordered_json(nullptr) : standard_error({{1.0, &per_run}});
      per_strategy[strategies[t]] = std::move(curve);
    }
    entry["strategies"] = std::move(per_strategy);
    space_list.push_back(std::move(entry));
  }

  nlohmann::ordered_json strategy_table;
  for (std::size_t t = 0; t < strategies.size(); ++t) {
    std::vector<double> all;
    nlohmann::ordered_json per_space;
    for (std::size_t s = 0; s < spaces.size(); ++s) {
      all.insert(all.end(), scores[t][s].begin(), scores[t][s].end());
      per_space[spaces[s].name] = scores[t][s].empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(mean(scores[t][s]));
    }
    nlohmann::ordered_json speedup_at, score_at;
    for (std::size_t i = 0; i < scored.size(); ++i) {
      const std::string key = std::to_string(scored[i]);
      speedup_at[key] = std::exp(mean(log_speedups[t][i]));
      std::vector<double> at_budget;
      for (const nlohmann::ordered_json& space : space_list)
        if (const auto& p = space["strategies"][strategies[t]]["score"][scored[i] - 1]; !p.is_null())
          at_budget.push_back(p.get<double>());
      score_at[key] = at_budget.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(mean(at_budget));
    }
    // The score weighs each space by its share of the scored (space, budget) pairs.
    std::vector<std::pair<double, const std::vector<double>*>> weighted;
    for (std::size_t s = 0; s < spaces.size(); ++s)
      weighted.emplace_back(all.empty() ? 0.0 : static_cast<double>(scores[t][s].size()) / static_cast<double>(all.size()),
                            &run_scores[t][s]);
    strategy_table[strategies[t]] = {{"score", all.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(mean(all))},
                                     {"score_standard_error", all.empty() ? nlohmann::ordered_json(nullptr) : standard_error(weighted)},
                                     {"speedup_at", speedup_at},
                                     {"score_at", score_at},
                                     {"score_per_space", per_space}};
  }
  return {{"strategies", strategy_table}, {"spaces", space_list}};
}

}  // namespace perftune
