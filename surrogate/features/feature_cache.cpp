#include "surrogate/features/feature_cache.h"

#include <tbb/parallel_for.h>

namespace perftune {

std::shared_ptr<const KernelGraphFeatures> FeatureCache::get(const Kernel& kernel) {
  {
    std::lock_guard lock(mutex_);
    const auto it = entries_.find(kernel.key());
    if (it != entries_.end()) return it->second;
  }
  // Computed outside the lock so parallel misses on different kernels do not serialize.
  auto features = std::make_shared<const KernelGraphFeatures>(featurize_kernel(kernel, *vocabulary_));
  std::lock_guard lock(mutex_);
  return entries_.emplace(kernel.key(), std::move(features)).first->second;
}

void FeatureCache::warm(std::span<const Kernel* const> kernels) {
  tbb::parallel_for(std::size_t{0}, kernels.size(), [&](std::size_t i) { (void)get(*kernels[i]); });
}

void FeatureCache::clear() {
  std::lock_guard lock(mutex_);
  entries_.clear();
}

std::size_t FeatureCache::size() const {
  std::lock_guard lock(mutex_);
  return entries_.size();
}

}  // namespace perftune
