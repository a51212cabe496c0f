#pragma once
// Test fake: a backend whose results come from a script (a runtime function plus configs that
// fail), which counts how often each config is measured so tests can prove nothing is measured
// twice.
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "hardware/backend.h"

namespace perftune::testing {

class ScriptedBackend : public Backend {
 public:
  explicit ScriptedBackend(std::function<double(const Config&)> seconds, double cost_per_measurement = 1.0)
      : seconds_(std::move(seconds)), cost_(cost_per_measurement) {}

  std::vector<MeasureResult> measure(const Kernel&, const SearchSpace& space, std::span<const Config> configs) override {
    batches.push_back(configs.size());
    std::vector<MeasureResult> results;
    for (const Config& config : configs) {
      ++times_measured[config];
      if (!space.contains(config)) results.push_back(MeasureResult::failure(MeasureStatus::kInvalidConfig, "outside", cost_));
      else if (failing.count(config)) results.push_back(MeasureResult::failure(MeasureStatus::kRuntimeError, "scripted crash", cost_));
      else results.push_back(MeasureResult::from_repeats({seconds_(config)}, cost_));
    }
    return results;
  }
  std::string fingerprint() const override { return "scripted:test"; }

  std::set<Config> failing;                  // configs that crash
  std::map<Config, int> times_measured;
  std::vector<std::size_t> batches;

  int max_times_measured() const {
    int most = 0;
    for (const auto& [config, count] : times_measured) most = std::max(most, count);
    return most;
  }

 private:
  std::function<double(const Config&)> seconds_;
  double cost_;
};

}  // namespace perftune::testing
