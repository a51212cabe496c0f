#include "surrogate/trees/tree_training.h"

#include <algorithm>
#include <chrono>
#include <ostream>
#include <random>
#include <stdexcept>

#include "ir/stable_hash.h"
#include "surrogate/trees/tree_labels.h"

namespace perftune {

nlohmann::ordered_json TreeTrainReport::to_json() const {
  return {{"kernels", kernels}, {"rows", rows}, {"features", features}, {"seconds", seconds}};
}

std::unique_ptr<TreeCostModel> train_trees(const std::vector<const MeasuredKernel*>& train, const TreeParams& params,
                                           std::ostream* progress, TreeTrainReport* report) {
  const auto start = std::chrono::steady_clock::now();
  TreeFeaturizer featurizer = make_tree_featurizer(FeatureVocabulary::build(train, params.min_opcode_count), params);
  std::vector<float> rows, labels;
  std::vector<unsigned> groups;
  for (std::size_t k = 0; k < train.size(); ++k) {
    const MeasuredKernel* kernel = train[k];
    if (!kernel->space) continue;
    std::vector<const Measurement*> measured;
    for (const Measurement* m : kernel->first_recordings())
      if (m->result.ok()) measured.push_back(m);
    if (measured.size() < 2) continue;
    if (params.max_configs_per_kernel > 0 && measured.size() > static_cast<std::size_t>(params.max_configs_per_kernel)) {
      // Drawn by the kernel, not the training seed: every seed trains on the same configs, whose
      // schedule features a source computes once per process.
      std::mt19937_64 sampler(stable_hash(kernel->kernel.key()));
      std::shuffle(measured.begin(), measured.end(), sampler);
      measured.resize(static_cast<std::size_t>(params.max_configs_per_kernel));
    }
    std::vector<Config> configs;
    std::vector<double> seconds;
    for (const Measurement* m : measured) {
      configs.push_back(m->config);
      seconds.push_back(m->result.seconds);
    }
    if (progress && !params.schedule_features.empty() && (k + 1) % 500 == 0)
      *progress << "trees: " << params.schedule_features << " features of " << k + 1 << " of " << train.size() << " kernels, "
                << std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() << " s\n";
    const std::vector<float> kernel_rows = featurizer.rows(kernel->kernel, *kernel->space, configs);
    rows.insert(rows.end(), kernel_rows.begin(), kernel_rows.end());
    const std::vector<float> kernel_labels = tree_labels(params.objective, seconds);
    labels.insert(labels.end(), kernel_labels.begin(), kernel_labels.end());
    groups.push_back(static_cast<unsigned>(configs.size()));
  }
  if (groups.empty()) throw std::invalid_argument("train_trees: no training kernel has two successful measurements");
  XgbMatrix matrix(rows, featurizer.width());
  matrix.set_labels(labels);
  matrix.set_groups(groups);
  auto booster = std::make_unique<XgbBooster>(&matrix);
  const std::pair<const char*, std::string> settings[] = {
      {"objective", params.objective},
      {"eta", std::to_string(params.eta)},
      {"max_depth", std::to_string(params.max_depth)},
      {"subsample", std::to_string(params.subsample)},
      {"colsample_bytree", std::to_string(params.colsample)},
      {"tree_method", "hist"},
      {"seed", std::to_string(params.seed)},
      {"nthread", std::to_string(params.threads)},
      {"verbosity", "0"}};
  for (const auto& [name, value] : settings) booster->set_param(name, value);
  for (int round = 0; round < params.rounds; ++round) {
    booster->boost(matrix, round);
    if (progress && ((round + 1) % 50 == 0 || round + 1 == params.rounds))
      *progress << "trees: round " << round + 1 << " of " << params.rounds << ", "
                << std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() << " s\n";
  }
  if (report) {
    report->kernels = groups.size();
    report->rows = labels.size();
    report->features = featurizer.width();
    report->seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  return std::make_unique<TreeCostModel>(params, std::move(featurizer), std::move(booster));
}

}  // namespace perftune
