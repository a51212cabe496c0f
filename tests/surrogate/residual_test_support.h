#pragma once
// A target on a 16 x 16 grid whose true log runtime is a smooth bowl, and priors given as
// functions: what the residual's tests (target_residual_test.cpp) and the batch policy's
// (tests/search/batch_policy_test.cpp) share.
#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ir/random.h"
#include "surrogate/cost_model.h"

namespace perftune::residual_testing {

inline SearchSpace grid_space() {
  std::vector<std::int64_t> values;
  for (std::int64_t v = 0; v < 16; ++v) values.push_back(v);
  return SearchSpace({{"a", values}, {"b", values}});
}

// log seconds: 1 ms at (10, 4), rising smoothly away from it.
inline double true_log_seconds(const Config& c) {
  const double a = static_cast<double>(c.values[0]) - 10, b = static_cast<double>(c.values[1]) - 4;
  return std::log(1e-3) + 0.01 * (a * a + b * b);
}

inline std::vector<double> true_log_seconds(const std::vector<Config>& configs) {
  std::vector<double> out;
  for (const Config& c : configs) out.push_back(true_log_seconds(c));
  return out;
}

class FunctionModel : public CostModel {
 public:
  explicit FunctionModel(std::function<double(const Config&)> f) : f_(std::move(f)) {}
  std::string name() const override { return "function"; }
  void predict(const Kernel&, const SearchSpace&, std::span<const Config> configs, std::span<float> out) override {
    for (std::size_t i = 0; i < configs.size(); ++i) out[i] = static_cast<float>(f_(configs[i]));
  }
  void update(const Kernel&, const SearchSpace&, std::span<const Measurement> measurements) override {
    updates += measurements.size();
  }
  std::size_t updates = 0;

 private:
  std::function<double(const Config&)> f_;
};

using LogSeconds = std::function<double(const Config&)>;

// An exact measurement (one repeat) of `config` on a target whose runtime is `target`.
inline Measurement measured_on(const LogSeconds& target, const Config& config) {
  return Measurement{config, MeasureResult::from_repeats({std::exp(target(config))}, 0.0)};
}

inline Measurement measured(const Config& config) {
  return measured_on([](const Config& c) { return true_log_seconds(c); }, config);
}

inline std::vector<Measurement> random_measurements(const SearchSpace& space, std::size_t n, std::uint64_t seed) {
  Rng rng(seed);
  std::vector<Measurement> out;
  std::vector<Config> seen;
  while (out.size() < n) {
    Config c = space.sample(rng);
    if (std::find(seen.begin(), seen.end(), c) != seen.end()) continue;
    seen.push_back(c);
    out.push_back(measured(c));
  }
  return out;
}

inline std::vector<double> predictions(CostModel& model, const Kernel& kernel, const SearchSpace& space,
                                const std::vector<Config>& configs) {
  std::vector<float> out(configs.size());
  model.predict(kernel, space, configs, out);
  return {out.begin(), out.end()};
}

inline const Kernel kKernel = Kernel::opaque("bowl", "00000000000000b0");

inline std::vector<Measurement> measured_on(const LogSeconds& target, const std::vector<Config>& configs) {
  std::vector<Measurement> out;
  for (const Config& c : configs) out.push_back(measured_on(target, c));
  return out;
}

// The model's root mean square error in log seconds over every config of the space.
inline double rmse_over_space(CostModel& model, const SearchSpace& space, const LogSeconds& target) {
  const std::vector<Config> all = space.enumerate();
  const std::vector<double> predicted = predictions(model, kKernel, space, all);
  double sum = 0.0;
  for (std::size_t i = 0; i < all.size(); ++i) sum += (predicted[i] - target(all[i])) * (predicted[i] - target(all[i]));
  return std::sqrt(sum / static_cast<double>(all.size()));
}

// Several priors: std::vector<std::unique_ptr<CostModel>> of FunctionModels.
inline std::vector<std::unique_ptr<CostModel>> function_priors(const std::vector<std::function<double(const Config&)>>& fs) {
  std::vector<std::unique_ptr<CostModel>> priors;
  for (const auto& f : fs) priors.push_back(std::make_unique<FunctionModel>(f));
  return priors;
}

// Two sources that disagree: bowls with their optima at opposite corners of the grid.
inline double corner_bowl(const Config& c, double at) {
  const double a = static_cast<double>(c.values[0]) - at, b = static_cast<double>(c.values[1]) - at;
  return std::log(1e-3) + 0.01 * (a * a + b * b);
}

// Closer to the corner bowl's optimum than the shares' mean optimum (7.5, 7.5) is, by a margin.
inline bool near(const Config& c, double at) {
  return std::abs(static_cast<double>(c.values[0]) - at) + std::abs(static_cast<double>(c.values[1]) - at) <= 7.0;
}

// The batch the tuner would take: the first k distinct configs `taken` does not exclude.
inline std::vector<Config> first_k(const std::vector<Config>& order, std::size_t k) {
  std::vector<Config> out;
  for (const Config& c : order)
    if (out.size() < k && std::find(out.begin(), out.end(), c) == out.end()) out.push_back(c);
  return out;
}

// All configs best first by the model's score, as the tuner ranks a search's proposals.
inline std::vector<Config> ranked_by(CostModel& model, const SearchSpace& space) {
  std::vector<Config> all = space.enumerate();
  const std::vector<double> scores = predictions(model, kKernel, space, all);
  std::vector<std::size_t> order(all.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return scores[a] < scores[b]; });
  std::vector<Config> out;
  for (const std::size_t i : order) out.push_back(all[i]);
  return out;
}

inline const auto kNothingTaken = [](const Config&) { return false; };

}  // namespace perftune::residual_testing
