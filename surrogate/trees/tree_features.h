#pragma once
// One fixed-width row per config for the tree model: what the GNN reads, flattened. A tree cannot
// walk a graph, so the kernel enters as a summary of its nodes (TVM's XGBoost model likewise reads
// loop-nest statistics, not the nest): the mean, maximum and sum of each node feature
// (surrogate/features/kernel_features.h), a count per opcode of the vocabulary, the node and edge
// counts; then the config's own row (surrogate/features/config_features.h), its analytical block
// filled when a device spec is given; then, with a schedule feature source (schedule_features.h),
// what the config compiles to.
#include <cstddef>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "ir/config.h"
#include "ir/device_spec.h"
#include "ir/kernel.h"
#include "ir/search_space.h"
#include "surrogate/analytical/analytical_model.h"
#include "surrogate/features/feature_vocabulary.h"
#include "surrogate/trees/schedule_features.h"
#include "surrogate/trees/tree_params.h"

namespace perftune {

class TreeFeaturizer {
 public:
  TreeFeaturizer(FeatureVocabulary vocabulary, const std::optional<DeviceSpec>& analytical_device,
                 std::shared_ptr<ScheduleFeatureSource> schedule_features = nullptr);

  std::size_t width() const;
  // configs.size() x width() floats, row-major. Configs must have the space's dimension.
  std::vector<float> rows(const Kernel& kernel, const SearchSpace& space, std::span<const Config> configs) const;
  const FeatureVocabulary& vocabulary() const { return vocabulary_; }

 private:
  std::size_t summary_width() const;
  FeatureVocabulary vocabulary_;
  std::shared_ptr<const AnalyticalModel> analytical_;  // null: the analytical block stays zero
  std::shared_ptr<ScheduleFeatureSource> schedule_features_;  // null: none
};

// The featurizer `params` describe: its analytical device and schedule feature source
// (std::invalid_argument if the source is not provided by this program).
TreeFeaturizer make_tree_featurizer(FeatureVocabulary vocabulary, const TreeParams& params);

}  // namespace perftune
