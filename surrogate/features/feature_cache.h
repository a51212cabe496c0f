#pragma once
// Kernel graph features cached per kernel key (a content hash, so equal graphs share an entry),
// filled in parallel with TBB. Thread-safe.
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <unordered_map>

#include "ir/kernel.h"
#include "surrogate/features/kernel_features.h"

namespace perftune {

class FeatureCache {
 public:
  // The cache reads the vocabulary on every miss; it must outlive the cache, and clear() must be
  // called whenever it changes.
  explicit FeatureCache(const FeatureVocabulary& vocabulary) : vocabulary_(&vocabulary) {}

  // The kernel's features, computed on first use.
  std::shared_ptr<const KernelGraphFeatures> get(const Kernel& kernel);
  // Featurizes every kernel not yet cached, in parallel (tbb::parallel_for over kernels).
  void warm(std::span<const Kernel* const> kernels);
  void clear();
  std::size_t size() const;

 private:
  const FeatureVocabulary* vocabulary_;
  mutable std::mutex mutex_;
  std::unordered_map<std::string, std::shared_ptr<const KernelGraphFeatures>> entries_;
};

}  // namespace perftune
