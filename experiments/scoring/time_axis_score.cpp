#include "experiments/scoring/time_axis_score.h"

#include <algorithm>
#include <cmath>

namespace perftune {

namespace {

nlohmann::ordered_json number_or_null(double value) {
  return std::isfinite(value) ? nlohmann::ordered_json(value) : nlohmann::ordered_json(nullptr);
}

// The fewest draws whose expected best reaches `target` (the space's size when none does, which
// only rounding can cause: all N draws find the optimum). The expectation falls with the draws,
// so a binary search finds it.
std::size_t draws_to_reach(const RecordedValues& values, double target) {
  std::size_t low = 1, high = values.size();
  while (low < high) {
    const std::size_t mid = low + (high - low) / 2;
    if (expected_random_best(values, mid) <= target) high = mid;
    else low = mid + 1;
  }
  return low;
}

}  // namespace

std::optional<TimeWindowSpan> time_window_span(const RecordedValues& values, const TimeWindow& window) {
  if (!(values.mean_cost_seconds > 0)) return std::nullopt;
  const double optimum = values.optimum(), median = values.median();
  auto target = [&](double p) { return optimum + (median - optimum) * (1.0 - p); };
  TimeWindowSpan span;
  span.seconds_per_config = values.mean_cost_seconds;
  span.start_draws = draws_to_reach(values, target(window.start));
  span.end_draws = std::max(span.start_draws, draws_to_reach(values, target(window.end)));
  span.start_seconds = static_cast<double>(span.start_draws) * span.seconds_per_config;
  span.end_seconds = static_cast<double>(span.end_draws) * span.seconds_per_config;
  return span;
}

double random_best_at_time(const RecordedValues& values, double seconds_per_config, double seconds) {
  // A hair of slack, so that t = b c (the window's own ends) counts b draws despite rounding.
  const double draws = std::floor(seconds / seconds_per_config * (1.0 + 1e-12));
  if (draws < 1) return values.no_runtime_value();
  return expected_random_best(values, static_cast<std::size_t>(std::min(draws, static_cast<double>(values.size()))));
}

double run_best_at_time(const RunCurve& run, const RecordedValues& values, double seconds) {
  std::optional<double> best;
  for (std::size_t i = 0; i < run.best_after.size(); ++i) {
    const double hardware = i < run.hardware_after.size() ? run.hardware_after[i] : 0.0;
    const double search = i < run.search_after.size() ? run.search_after[i] : 0.0;
    if (hardware + search > seconds * (1.0 + 1e-12)) break;  // completion times only grow
    if (run.best_after[i]) best = run.best_after[i];
  }
  return best.value_or(values.no_runtime_value());
}

std::optional<TimeAxisScore> time_axis_score(const RecordedValues& values, const TimeWindowSpan& span,
                                             const std::vector<const RunCurve*>& runs) {
  TimeAxisScore result;
  result.per_run.assign(runs.size(), 0.0);
  std::size_t defined = 0;
  std::vector<double> best(runs.size());
  for (std::size_t g = 0; g < kTimeGridPoints; ++g) {
    const double t = span.start_seconds + (span.end_seconds - span.start_seconds) * static_cast<double>(g) /
                                              static_cast<double>(kTimeGridPoints - 1);
    double mean = 0.0;
    for (std::size_t r = 0; r < runs.size(); ++r) {
      best[r] = run_best_at_time(*runs[r], values, t);
      mean += best[r] / static_cast<double>(runs.size());
    }
    const double f_random = random_best_at_time(values, span.seconds_per_config, t);
    const std::optional<double> p = standardized_score(f_random, mean, values.optimum());
    if (g % kTimeCurveStride == 0) result.curve.push_back(p ? *p : NAN);
    if (!p) continue;
    ++defined;
    result.score += *p;
    for (std::size_t r = 0; r < runs.size(); ++r) result.per_run[r] += *standardized_score(f_random, best[r], values.optimum());
  }
  if (defined == 0) return std::nullopt;
  std::size_t reaching_the_end = 0;
  for (const RunCurve* run : runs) {
    const std::size_t last = run->best_after.size();
    const double finished = last == 0 ? 0.0
                                      : (last <= run->hardware_after.size() ? run->hardware_after[last - 1] : 0.0) +
                                            (last <= run->search_after.size() ? run->search_after[last - 1] : 0.0);
    if (finished >= span.end_seconds) ++reaching_the_end;
  }
  result.covered = static_cast<double>(reaching_the_end) / static_cast<double>(runs.size());
  result.score /= static_cast<double>(defined);
  for (double& p : result.per_run) p /= static_cast<double>(defined);
  return result;
}

void add_time_axis_scores(nlohmann::ordered_json& tables, const std::vector<SpaceBaseline>& spaces,
                          const std::vector<std::string>& strategies, const std::vector<RunCurve>& runs,
                          const std::vector<TimeWindow>& windows) {
  // [strategy][window]: each scored space's per-run scores, and the space scores.
  std::vector<std::vector<std::vector<std::vector<double>>>> per_run(strategies.size(),
                                                                     std::vector<std::vector<std::vector<double>>>(windows.size()));
  std::vector<std::vector<std::vector<double>>> space_scores(strategies.size(), std::vector<std::vector<double>>(windows.size()));
  for (std::size_t s = 0; s < spaces.size(); ++s) {
    nlohmann::ordered_json& entry = tables["spaces"][s];
    if (spaces[s].live) continue;
    nlohmann::ordered_json spans = nlohmann::ordered_json::array();
    std::vector<std::optional<TimeWindowSpan>> window_spans;
    for (const TimeWindow& window : windows) {
      window_spans.push_back(time_window_span(spaces[s].values, window));
      if (!window_spans.back()) continue;
      const TimeWindowSpan& span = *window_spans.back();
      spans.push_back({{"window", window.label()},
                       {"p_start", window.start},
                       {"p_end", window.end},
                       {"seconds_per_config", span.seconds_per_config},
                       {"start_draws", span.start_draws},
                       {"end_draws", span.end_draws},
                       {"start_seconds", span.start_seconds},
                       {"end_seconds", span.end_seconds}});
    }
    entry["time_windows"] = std::move(spans);
    for (std::size_t t = 0; t < strategies.size(); ++t) {
      std::vector<const RunCurve*> mine;
      for (const RunCurve& run : runs)
        if (run.space == s && run.strategy == t) mine.push_back(&run);
      nlohmann::ordered_json scores = nlohmann::ordered_json::object(), errors = nlohmann::ordered_json::object(),
                             curves = nlohmann::ordered_json::object(), covered = nlohmann::ordered_json::object();
      for (std::size_t w = 0; w < windows.size(); ++w) {
        const std::string label = windows[w].label();
        std::optional<TimeAxisScore> score;
        if (window_spans[w] && !mine.empty()) score = time_axis_score(spaces[s].values, *window_spans[w], mine);
        scores[label] = score ? nlohmann::ordered_json(score->score) : nlohmann::ordered_json(nullptr);
        covered[label] = score ? nlohmann::ordered_json(score->covered) : nlohmann::ordered_json(nullptr);
        errors[label] = score ? standard_error({{1.0, &score->per_run}}) : nlohmann::ordered_json(nullptr);
        nlohmann::ordered_json curve = nlohmann::ordered_json::array();
        if (score)
          for (const double p : score->curve) curve.push_back(number_or_null(p));
        curves[label] = std::move(curve);
        if (score) {
          space_scores[t][w].push_back(score->score);
          per_run[t][w].push_back(std::move(score->per_run));
        }
      }
      nlohmann::ordered_json& curve_entry = entry["strategies"][strategies[t]];
      curve_entry["time_score"] = std::move(scores);
      curve_entry["time_score_standard_error"] = std::move(errors);
      curve_entry["time_score_curve"] = std::move(curves);
      curve_entry["time_window_covered"] = std::move(covered);
    }
  }
  for (std::size_t t = 0; t < strategies.size(); ++t) {
    nlohmann::ordered_json scores = nlohmann::ordered_json::object(), errors = nlohmann::ordered_json::object();
    for (std::size_t w = 0; w < windows.size(); ++w) {
      const std::vector<double>& mine = space_scores[t][w];
      const std::string label = windows[w].label();
      if (mine.empty()) {
        scores[label] = nullptr;
        errors[label] = nullptr;
        continue;
      }
      double mean = 0.0;
      for (const double v : mine) mean += v / static_cast<double>(mine.size());
      std::vector<std::pair<double, const std::vector<double>*>> spread;
      for (const auto& runs_of_space : per_run[t][w]) spread.emplace_back(1.0 / static_cast<double>(mine.size()), &runs_of_space);
      scores[label] = mean;
      errors[label] = standard_error(spread);
    }
    tables["strategies"][strategies[t]]["time_score"] = std::move(scores);
    tables["strategies"][strategies[t]]["time_score_standard_error"] = std::move(errors);
  }
}

}  // namespace perftune
