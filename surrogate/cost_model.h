#pragma once
// A cost model predicts how fast configs of a kernel run. Batched: one predict() call scores
// thousands of configs, which is what makes search with a learned model affordable. Header-only
// so search/ can depend on the interface without linking libtorch.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "ir/corpus.h"
#include "ir/kernel.h"
#include "ir/search_space.h"

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
  // Batch selection for one tuner round (the k configs measured together, judged by the best of
  // them). The tuner asks the strategy for proposal_pool(k) proposals, ranks them by predict(),
  // and takes configs in the order choose_batch returns them, skipping any that `taken` says are
  // measured or already in the batch, until k are taken. Defaults: k proposals, in rank order (the
  // greedy top-k). `seed` and `round` make a randomized choice reproducible.
  virtual std::size_t proposal_pool(std::size_t k) const { return k; }
  virtual std::vector<Config> choose_batch(const Kernel& kernel, const SearchSpace& space, std::vector<Config> ranked,
                                           std::size_t k, std::uint64_t seed, std::size_t round,
                                           const std::function<bool(const Config&)>& taken) {
    return ranked;
  }
  // False for models that only rank (their outputs are not comparable across kernels).
  virtual bool predicts_absolute_time() const { return true; }
};

}  // namespace perftune
