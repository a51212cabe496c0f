#pragma once
// A cost model predicts how fast configs of a kernel run. Batched: one predict() call scores
// thousands of configs, which is what makes search with a learned model affordable. Header-only
// so search/ can depend on the interface without linking libtorch.
#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "ir/corpus.h"
#include "ir/kernel.h"
#include "ir/search_space.h"
#include "surrogate/predictive_belief.h"

namespace perftune {

class CostModel {
 public:
  virtual ~CostModel() = default;
  virtual std::string name() const = 0;
  // Writes a predicted log(seconds) per config into `log_seconds` (same length as `configs`).
  // Lower is faster; ranking models may return scores on any scale that preserve order.
  virtual void predict(const Kernel& kernel, const SearchSpace& space, std::span<const Config> configs,
                       std::span<float> log_seconds) = 0;
  // Learns from new measurements of `kernel` (the tuner calls it each round). Default: nothing.
  virtual void update(const Kernel& kernel, const SearchSpace& space, std::span<const Measurement> measurements) {}
  // The model's posterior about `kernel`, for a batch policy that samples it (search/batch_policy.h);
  // none (the default) for a model without one.
  virtual std::unique_ptr<PredictiveBelief> belief(const Kernel& kernel, const SearchSpace& space) { return nullptr; }
  // False for models that only rank (their outputs are not comparable across kernels).
  virtual bool predicts_absolute_time() const { return true; }
};

}  // namespace perftune
