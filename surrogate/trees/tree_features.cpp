#include "surrogate/trees/tree_features.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "surrogate/analytical/analytical_features.h"
#include "surrogate/features/config_features.h"
#include "surrogate/features/kernel_features.h"

namespace perftune {

namespace {

constexpr std::size_t kPoolings = 3;  // mean, max, sum

}  // namespace

TreeFeaturizer::TreeFeaturizer(FeatureVocabulary vocabulary, const std::optional<DeviceSpec>& analytical_device,
                               std::shared_ptr<ScheduleFeatureSource> schedule_features)
    : vocabulary_(std::move(vocabulary)), schedule_features_(std::move(schedule_features)) {
  if (analytical_device) analytical_ = std::make_shared<const AnalyticalModel>(*analytical_device);
}

std::size_t TreeFeaturizer::summary_width() const { return kPoolings * kNodeFeatureWidth + vocabulary_.opcode_count() + 2; }

std::size_t TreeFeaturizer::width() const {
  return summary_width() + kConfigFeatureWidth + (schedule_features_ ? schedule_features_->width() : 0);
}

std::vector<float> TreeFeaturizer::rows(const Kernel& kernel, const SearchSpace& space, std::span<const Config> configs) const {
  const KernelGraphFeatures graph = featurize_kernel(kernel, vocabulary_);
  std::vector<float> summary(summary_width(), 0.0f);
  float* mean = summary.data();
  float* max = mean + kNodeFeatureWidth;
  float* sum = max + kNodeFeatureWidth;
  float* opcodes = sum + kNodeFeatureWidth;
  std::fill(max, max + kNodeFeatureWidth, graph.node_count ? std::numeric_limits<float>::lowest() : 0.0f);
  for (std::size_t node = 0; node < graph.node_count; ++node) {
    const float* features = graph.node_features.data() + node * kNodeFeatureWidth;
    for (std::size_t j = 0; j < kNodeFeatureWidth; ++j) {
      sum[j] += features[j];
      max[j] = std::max(max[j], features[j]);
    }
    opcodes[graph.opcode_ids[node]] += 1.0f;
  }
  for (std::size_t j = 0; j < kNodeFeatureWidth; ++j) mean[j] = graph.node_count ? sum[j] / graph.node_count : 0.0f;
  summary[summary.size() - 2] = static_cast<float>(graph.node_count);
  summary[summary.size() - 1] = static_cast<float>(graph.edge_producer.size());

  std::vector<float> config_rows(configs.size() * kConfigFeatureWidth);
  ConfigFeaturizer(graph, space, vocabulary_).featurize(configs, config_rows);
  if (analytical_) {
    std::vector<float> estimates(configs.size() * kAnalyticalFeatureWidth);
    analytical_features(*analytical_, kernel, space, configs, estimates);
    for (std::size_t i = 0; i < configs.size(); ++i)
      std::copy_n(estimates.begin() + i * kAnalyticalFeatureWidth, kAnalyticalFeatureWidth,
                  config_rows.begin() + i * kConfigFeatureWidth + kAnalyticalFeatureOffset);
  }
  const std::size_t schedule_width = schedule_features_ ? schedule_features_->width() : 0;
  std::vector<float> schedule_rows(configs.size() * schedule_width);
  if (schedule_features_) schedule_features_->rows(kernel, space, configs, schedule_rows);
  std::vector<float> out;
  out.reserve(configs.size() * width());
  for (std::size_t i = 0; i < configs.size(); ++i) {
    out.insert(out.end(), summary.begin(), summary.end());
    out.insert(out.end(), config_rows.begin() + i * kConfigFeatureWidth, config_rows.begin() + (i + 1) * kConfigFeatureWidth);
    out.insert(out.end(), schedule_rows.begin() + i * schedule_width, schedule_rows.begin() + (i + 1) * schedule_width);
  }
  // An estimate the analytical model cannot give (an infinite time) is missing to the trees, which
  // learn a direction for missing values; XGBoost rejects infinities.
  for (float& value : out)
    if (std::isinf(value)) value = std::numeric_limits<float>::quiet_NaN();
  return out;
}

TreeFeaturizer make_tree_featurizer(FeatureVocabulary vocabulary, const TreeParams& params) {
  return TreeFeaturizer(std::move(vocabulary), params.analytical_device,
                        params.schedule_features.empty() ? nullptr : schedule_features(params.schedule_features));
}

}  // namespace perftune
