#pragma once
// The kernels of one program under many fusion configs, each built once. partition() copies the
// program graph into new Kernels (and hashes their content) for every group of every config,
// though the configs of a search or an evaluation share most of their groups, and a fused kernel
// depends only on its member ops. Here a config costs a union-find, a topological order of its
// groups and one lookup per group; only a group not seen before is built (fused_kernel(), as
// partition() builds it).
#include <cstddef>
#include <deque>
#include <map>
#include <vector>

#include "ir/fusion.h"

namespace perftune {

class FusedKernelCache {
 public:
  explicit FusedKernelCache(Program program);

  // Indices (into kernel()) of the kernels partition(program, config) would build, in its order, so
  // a sum over them adds in the same order as a sum over partition()'s kernels. Throws FusionError
  // as partition() does (wrong length, a fused parameter edge, a cycle).
  std::vector<std::size_t> kernels(const FusionConfig& config);
  // kernels() of the config that fuses `fused_edges` (a fusion space's TileChoice::fused_edges);
  // an id past the program's edges is ignored, as a knob of another program's space would be.
  std::vector<std::size_t> kernels_fusing(const std::vector<std::size_t>& fused_edges);

  // Stays valid as more kernels are built (a training step holds several configs' kernels at once).
  const Kernel& kernel(std::size_t index) const { return kernels_[index]; }
  std::size_t size() const { return kernels_.size(); }  // kernels built so far
  const Program& program() const { return program_; }

 private:
  Program program_;
  std::vector<OpId> topological_;  // program_'s ops, operands first
  std::map<std::vector<OpId>, std::size_t> index_;  // a group's member ops, topological -> kernels_
  std::deque<Kernel> kernels_;  // a deque: references survive a push_back
};

}  // namespace perftune
