#include "experiments/scheduler_comparison.h"

#include <cmath>
#include <limits>
#include <map>
#include <optional>

namespace perftune {
namespace {

struct Fastest {
  std::string name;
  double seconds = std::numeric_limits<double>::infinity();
};

std::optional<Fastest> fastest_scheduler(const nlohmann::ordered_json& space) {
  if (!space.contains("peers") || !space["peers"].is_object()) return std::nullopt;
  std::optional<Fastest> fastest;
  for (const auto& [name, peer] : space["peers"].items()) {
    if (peer.value("kind", "") != "scheduler" || !peer.contains("seconds") || !peer["seconds"].is_number()) continue;
    const double seconds = peer["seconds"].get<double>();
    if (seconds > 0 && (!fastest || seconds < fastest->seconds)) fastest = Fastest{name, seconds};
  }
  return fastest;
}

// f_strategy(b) of one strategy on one space; a curve shorter than b keeps its last best.
std::optional<double> best_after(const nlohmann::ordered_json& strategy, std::size_t budget) {
  if (!strategy.contains("best_mean") || !strategy["best_mean"].is_array() || strategy["best_mean"].empty() || budget == 0)
    return std::nullopt;
  const auto& curve = strategy["best_mean"];
  const auto& value = curve[std::min(budget, curve.size()) - 1];
  if (!value.is_number() || !(value.get<double>() > 0)) return std::nullopt;
  return value.get<double>();
}

struct Tally {
  double log_sum = 0;
  std::size_t spaces = 0, keeping_up = 0;
  double min = std::numeric_limits<double>::infinity();
  std::string min_space;
};

}  // namespace

void add_scheduler_comparison(nlohmann::ordered_json& spaces, nlohmann::ordered_json& strategies,
                              const std::vector<std::size_t>& budgets) {
  // [strategy name][budget index]
  std::map<std::string, std::vector<Tally>> tallies;
  for (auto& space : spaces) {
    const std::optional<Fastest> fastest = fastest_scheduler(space);
    if (!fastest || !space.contains("strategies")) continue;
    space["fastest_scheduler"] = {{"name", fastest->name}, {"seconds", fastest->seconds}};
    for (auto& [name, strategy] : space["strategies"].items()) {
      nlohmann::ordered_json ratios = nlohmann::ordered_json::object();
      std::vector<Tally>& mine = tallies[name];
      mine.resize(budgets.size());
      for (std::size_t b = 0; b < budgets.size(); ++b) {
        const std::optional<double> best = best_after(strategy, budgets[b]);
        if (!best) continue;
        const double ratio = fastest->seconds / *best;
        ratios[std::to_string(budgets[b])] = ratio;
        Tally& tally = mine[b];
        tally.log_sum += std::log(ratio);
        ++tally.spaces;
        if (ratio >= kKeepsUpWithScheduler) ++tally.keeping_up;
        if (ratio < tally.min) {
          tally.min = ratio;
          tally.min_space = space.value("name", "");
        }
      }
      strategy["vs_fastest_scheduler"] = std::move(ratios);
    }
  }
  for (auto& [name, per_budget] : tallies) {
    if (!strategies.contains(name)) continue;
    nlohmann::ordered_json table = nlohmann::ordered_json::object();
    for (std::size_t b = 0; b < budgets.size(); ++b) {
      const Tally& tally = per_budget[b];
      if (tally.spaces == 0) continue;
      table[std::to_string(budgets[b])] = {{"geomean", std::exp(tally.log_sum / static_cast<double>(tally.spaces))},
                                           {"min", tally.min},
                                           {"min_space", tally.min_space},
                                           {"spaces_keeping_up", tally.keeping_up},
                                           {"spaces", tally.spaces}};
    }
    strategies[name]["vs_fastest_scheduler"] = std::move(table);
  }
}

}  // namespace perftune
