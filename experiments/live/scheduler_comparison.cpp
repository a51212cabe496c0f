#include "experiments/live/scheduler_comparison.h"

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

// The part of a space row a basis reads and writes: the row itself, or its re-measured block.
nlohmann::ordered_json* basis_block(nlohmann::ordered_json& space, ComparisonBasis basis) {
  if (basis == ComparisonBasis::kRunFigures) return &space;
  if (!space.contains("remeasured") || !space["remeasured"].is_object()) return nullptr;
  return &space["remeasured"];
}

std::optional<Fastest> fastest_scheduler(const nlohmann::ordered_json& block) {
  if (!block.contains("peers") || !block["peers"].is_object()) return std::nullopt;
  std::optional<Fastest> fastest;
  for (const auto& [name, peer] : block["peers"].items()) {
    if (peer.value("kind", "") != "scheduler" || !peer.contains("seconds") || !peer["seconds"].is_number()) continue;
    const double seconds = peer["seconds"].get<double>();
    if (seconds > 0 && (!fastest || seconds < fastest->seconds)) fastest = Fastest{name, seconds};
  }
  return fastest;
}

std::optional<double> positive(const nlohmann::ordered_json& value) {
  if (!value.is_number() || !(value.get<double>() > 0)) return std::nullopt;
  return value.get<double>();
}

// f_strategy(b) of one strategy on one space: from the runs' curve (one shorter than b keeps its
// last best), or its picks re-measured (scored budgets only).
std::optional<double> best_after(const nlohmann::ordered_json& strategy, std::size_t budget, ComparisonBasis basis) {
  if (budget == 0) return std::nullopt;
  if (basis == ComparisonBasis::kRemeasured) {
    const std::string key = std::to_string(budget);
    if (!strategy.contains("pick_seconds_at") || !strategy["pick_seconds_at"].contains(key)) return std::nullopt;
    return positive(strategy["pick_seconds_at"][key]);
  }
  if (!strategy.contains("best_mean") || !strategy["best_mean"].is_array() || strategy["best_mean"].empty()) return std::nullopt;
  const auto& curve = strategy["best_mean"];
  return positive(curve[std::min(budget, curve.size()) - 1]);
}

struct Tally {
  double log_sum = 0;
  std::size_t spaces = 0, keeping_up = 0;
  double min = std::numeric_limits<double>::infinity();
  std::string min_space;
};

}  // namespace

void add_scheduler_comparison(nlohmann::ordered_json& spaces, nlohmann::ordered_json& strategies,
                              const std::vector<std::size_t>& budgets, ComparisonBasis basis) {
  // [strategy name][budget index]
  std::map<std::string, std::vector<Tally>> tallies;
  for (auto& space : spaces) {
    nlohmann::ordered_json* block = basis_block(space, basis);
    if (!block) continue;
    const std::optional<Fastest> fastest = fastest_scheduler(*block);
    if (!fastest || !block->contains("strategies")) continue;
    (*block)["fastest_scheduler"] = {{"name", fastest->name}, {"seconds", fastest->seconds}};
    for (auto& [name, strategy] : (*block)["strategies"].items()) {
      nlohmann::ordered_json ratios = nlohmann::ordered_json::object();
      std::vector<Tally>& mine = tallies[name];
      mine.resize(budgets.size());
      for (std::size_t b = 0; b < budgets.size(); ++b) {
        const std::optional<double> best = best_after(strategy, budgets[b], basis);
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
    if (table.empty()) continue;  // no pick of this strategy to compare (Adams2019's sampling, re-measured)
    strategies[name][basis == ComparisonBasis::kRemeasured ? "vs_fastest_scheduler_remeasured" : "vs_fastest_scheduler"] = std::move(table);
  }
}

}  // namespace perftune
