#pragma once
// Test fakes for search: a product space of tile sizes and a toy cost model that rewards one tile
// config (the runtime grows with the log2 distance of each knob from the target), so a search
// that works must find the target.
#include <cmath>
#include <cstdint>
#include <mutex>
#include <vector>

#include "ir/kernel.h"
#include "ir/knob_roles.h"
#include "ir/search_space.h"
#include "surrogate/cost_model.h"

namespace perftune::testing {

// Knobs tile.out.0, tile.out.1, tile.red, each over the powers of two 1..2^(levels-1).
inline SearchSpace tile_space(int levels = 10, SearchSpace::Constraint constraint = {}) {
  std::vector<std::int64_t> powers;
  for (int i = 0; i < levels; ++i) powers.push_back(std::int64_t{1} << i);
  return SearchSpace({{tile_out_knob(0), powers}, {tile_out_knob(1), powers}, {kTileReductionKnob, powers}},
                     std::move(constraint));
}

// The toy runtime in seconds: 1 ms at the target, times 1.3 per factor of two away, per knob.
inline double toy_seconds(const Config& config, const Config& target) {
  double distance = 0.0;
  for (std::size_t k = 0; k < config.values.size(); ++k)
    distance += std::abs(std::log2(static_cast<double>(config.values[k])) - std::log2(static_cast<double>(target.values[k])));
  return 1e-3 * std::pow(1.3, distance);
}

class ToyCostModel : public CostModel {
 public:
  explicit ToyCostModel(Config target) : target_(std::move(target)) {}
  std::string name() const override { return "toy"; }
  void predict(const Kernel&, const SearchSpace&, std::span<const Config> configs, std::span<float> out) override {
    {
      std::lock_guard lock(mutex_);
      batch_sizes.push_back(configs.size());
    }
    for (std::size_t i = 0; i < configs.size(); ++i) out[i] = static_cast<float>(std::log(toy_seconds(configs[i], target_)));
  }
  void update(const Kernel&, const SearchSpace&, std::span<const Measurement> measurements) override {
    updates.push_back(measurements.size());
  }

  std::vector<std::size_t> batch_sizes;  // one entry per predict() call
  std::vector<std::size_t> updates;      // measurements per update() call

 private:
  Config target_;
  std::mutex mutex_;
};

// How many knobs two configs of one space differ in (Hamming distance).
inline std::size_t knobs_apart(const Config& a, const Config& b) {
  std::size_t apart = 0;
  for (std::size_t k = 0; k < a.values.size(); ++k) apart += a.values[k] != b.values[k] ? 1 : 0;
  return apart;
}

inline Kernel toy_kernel() { return Kernel::opaque("toy_matmul", "00000000000000aa"); }

}  // namespace perftune::testing
