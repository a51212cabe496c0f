#include "surrogate/fusion/fused_kernel_cache.h"

namespace perftune {

FusedKernelCache::FusedKernelCache(Program program)
    : program_(std::move(program)), topological_(program_.topological_order()) {}

std::vector<std::size_t> FusedKernelCache::kernels(const FusionConfig& config) {
  const std::vector<int> groups = fusion_groups(program_, config);
  const auto order = fusion_group_order(program_, groups);
  if (!order) throw FusionError(*fusion_cycle(program_, groups));
  std::vector<std::vector<OpId>> members(order->size());
  for (OpId id : topological_)
    if (groups[id] >= 0) members[static_cast<std::size_t>(groups[id])].push_back(id);
  std::vector<std::size_t> out;
  out.reserve(order->size());
  for (int g : *order) {
    std::vector<OpId>& group = members[static_cast<std::size_t>(g)];
    auto it = index_.find(group);
    if (it == index_.end()) {
      it = index_.emplace(group, kernels_.size()).first;
      kernels_.push_back(fused_kernel(program_, groups, std::move(group)).kernel);
    }
    out.push_back(it->second);
  }
  return out;
}

std::vector<std::size_t> FusedKernelCache::kernels_fusing(const std::vector<std::size_t>& fused_edges) {
  FusionConfig fusion = FusionConfig::none(program_);
  for (std::size_t edge : fused_edges)
    if (edge < fusion.fused.size()) fusion.fused[edge] = true;
  return kernels(fusion);
}

}  // namespace perftune
