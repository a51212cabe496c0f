#pragma once
// Data-parallel training (`mpirun -n N perftune train`): every rank holds the same model and draws
// the same groups each step; rank r computes the loss of groups r, r + N, ... and the ranks sum
// their gradients before the optimizer steps, so each step is the one-process step on the whole
// batch and the weights stay equal on every rank. An interface without libtorch in it: the cli
// builds the c10d implementation (gloo_gradient_sync.h); tests may stand in for it.
#include <cstddef>
#include <span>

namespace perftune {

class GradientSync {
 public:
  virtual ~GradientSync() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // Replaces `values` on every rank by their element-wise sum over the ranks.
  virtual void sum(std::span<float> values) = 0;

  // Whether group `index` of a step is this rank's to compute.
  bool owns(std::size_t index) const { return static_cast<int>(index % static_cast<std::size_t>(size())) == rank(); }
};

}  // namespace perftune
