#pragma once
// The kernels a program runs under its fusion configs, each with the schedule it runs under: what
// the fusion task sums (surrogate/fusion/fusion_evaluation.h) and what training through that sum
// (TrainOptions::program_weight) predicts. Each distinct fused kernel is built once
// (FusedKernelCache) and scheduled once by the injected tiling; a config then only places its
// fused producers (inlined or per tile) in that schedule (ir/fusion_placements.h).
#include <functional>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "ir/corpus.h"
#include "ir/knob_roles.h"
#include "surrogate/fusion/fused_kernel_cache.h"

namespace perftune {

// The tile space and config a fused kernel runs with inside a program (the backend's choice, e.g.
// the CPU backend's default tiles). Injected, because surrogate/ does not depend on hardware/.
using KernelTiling = std::function<std::pair<std::shared_ptr<const SearchSpace>, Config>(const Kernel&)>;

// Programs measured under fusion placements, to train on through the fusion task's sum
// (TrainOptions::program_weight, train_gnn), and how their kernels are scheduled.
struct ProgramTraining {
  std::vector<const MeasuredKernel*> programs;
  KernelTiling tiling;
};

class ProgramKernels {
 public:
  // One kernel of a config: an index for kernel() and space(), and its schedule in that space.
  struct Term {
    std::size_t kernel;
    Config schedule;
  };

  // `program` is a fusion measurement (is_fusion_space); both it and `tiling` must outlive this.
  ProgramKernels(const MeasuredKernel& program, const KernelTiling& tiling);

  // The config's kernels in partition()'s order. Throws FusionError for a config that does not
  // partition. kernel() and space() references stay valid for the life of this object.
  std::vector<Term> terms(const Config& config);
  const Kernel& kernel(std::size_t index) const { return kernels_.kernel(index); }
  const SearchSpace& space(std::size_t index) const { return *schedules_.at(index)->first; }

 private:
  const MeasuredKernel& program_;
  const KernelTiling& tiling_;
  FusedKernelCache kernels_;
  std::vector<KnobInfo> roles_;
  std::vector<std::optional<std::pair<std::shared_ptr<const SearchSpace>, Config>>> schedules_;  // per built kernel
};

}  // namespace perftune
