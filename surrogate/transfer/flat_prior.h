#pragma once
// A prior that knows nothing: every config the same log time. As the one prior of a target
// residual (surrogate/transfer/target_residual.h) the model is a + f(x), f a Gaussian process on the
// target's own measurements: Bayesian optimization with no source data, for a user whose kernel
// family has no recordings to transfer from (campaign model {"type": "gaussian_process"}).
#include <algorithm>
#include <string>

#include "surrogate/cost_model.h"

namespace perftune {

class FlatPrior : public CostModel {
 public:
  std::string name() const override { return "flat"; }
  void predict(const Kernel&, const SearchSpace&, std::span<const Config>, std::span<float> log_seconds) override {
    std::fill(log_seconds.begin(), log_seconds.end(), 0.0f);
  }
};

}  // namespace perftune
