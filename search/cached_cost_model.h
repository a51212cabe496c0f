#pragma once
// A cost model that remembers its inner model's scores by config, so what search revisits is
// scored once: annealing chains circling a good region, evolution's surviving parents and
// children seen in earlier generations, the tuner re-ranking proposals the strategy has just
// scored. Misses of a batch go to the inner model in one predict() call, in batch order, so
// batching is kept.
//
// A model that learns online changes its scores at every update(): then the cache is dropped
// there (it still saves the repeats within a round). A fixed model (the analytical one, a
// learned checkpoint used without updates) keeps its scores across rounds.
#include <chrono>
#include <cstddef>
#include <string>
#include <unordered_map>

#include "surrogate/cost_model.h"

namespace perftune {

struct CachedCostModelOptions {
  // Whether update() changes the inner model's scores (drop the cache there).
  bool inner_learns = true;
  // Entries kept before the cache is cleared and refilled. 2^17 configs of a 35-knob fusion space
  // are ~40 MB (35 int64 values + the hash node each), about two rounds of the default annealing
  // (128 chains x 500 steps) on a fusion space.
  std::size_t capacity = std::size_t{1} << 17;
};

class CachedCostModel : public CostModel {
 public:
  // `inner` must outlive this model. Not thread-safe, like the models it wraps: search calls
  // predict() from one thread.
  CachedCostModel(CostModel& inner, CachedCostModelOptions options = {}) : inner_(inner), options_(options) {}

  std::string name() const override { return inner_.name(); }
  bool predicts_absolute_time() const override { return inner_.predicts_absolute_time(); }
  // Scores are those the inner model gave the config the first time it was asked (for the same
  // kernel and space, since the last update that dropped the cache).
  void predict(const Kernel& kernel, const SearchSpace& space, std::span<const Config> configs,
               std::span<float> log_seconds) override;
  void update(const Kernel& kernel, const SearchSpace& space, std::span<const Measurement> measurements) override;
  // The inner model's own belief (a cache has none of its own).
  std::unique_ptr<PredictiveBelief> belief(const Kernel& kernel, const SearchSpace& space) override { return inner_.belief(kernel, space); }

  std::size_t hits() const { return hits_; }
  std::size_t misses() const { return misses_; }
  // Wall time spent inside the inner model's predict() and update().
  double inner_predict_seconds() const { return inner_predict_seconds_; }
  double inner_update_seconds() const { return inner_update_seconds_; }

 private:
  CostModel& inner_;
  CachedCostModelOptions options_;
  // The (kernel, space) the cached scores belong to; another one clears the cache.
  std::string kernel_key_;
  const SearchSpace* space_ = nullptr;
  std::unordered_map<Config, float, ConfigHash> scores_;
  std::size_t hits_ = 0, misses_ = 0;
  double inner_predict_seconds_ = 0.0, inner_update_seconds_ = 0.0;
};

}  // namespace perftune
