#pragma once
// Internals of GnnCostModel shared by its own file, the trainer and the checkpoint code. Includes
// libtorch: never include it from a header outside surrogate/.
#include <deque>
#include <memory>
#include <mutex>
#include <unordered_map>

#include <torch/torch.h>

#include "ir/random.h"
#include "surrogate/analytical_model.h"
#include "surrogate/feature_cache.h"
#include "surrogate/gnn_cost_model.h"
#include "surrogate/gnn_model.h"

namespace perftune {

// One kernel's successful measurements kept for replay during online updates.
struct ReplayEntry {
  Kernel kernel;
  std::shared_ptr<const SearchSpace> space;
  std::vector<Measurement> measurements;
};

struct GnnCostModel::State {
  State(GnnParams params_in, FeatureVocabulary vocabulary_in, TrainOptions options_in);

  GnnParams params;
  FeatureVocabulary vocabulary;
  TrainOptions options;
  FeatureCache cache{vocabulary};
  GnnModel model{nullptr};
  std::unique_ptr<AnalyticalModel> analytical;  // the hybrid feature's estimates (params.analytical_device)
  std::unique_ptr<torch::optim::Adam> optimizer;  // created on the first training step
  Rng rng;
  std::deque<ReplayEntry> replay;
  bool trained = false;  // false until a training step or a checkpoint load set the weights
  std::recursive_mutex mutex;
  std::unordered_map<std::string, GraphTensors> graphs;       // by kernel key
  std::unordered_map<std::string, torch::Tensor> embeddings;  // late join, eval mode, by kernel key

  const GraphTensors& graph(const Kernel& kernel);
  // Config features [configs, kConfigFeatureWidth], the hybrid block filled when the model has one.
  torch::Tensor config_features(const Kernel& kernel, const KernelGraphFeatures& features, const SearchSpace& space,
                                std::span<const Config> configs);
  // Predicted log seconds [configs] with gradients when `training` (train mode), else without.
  torch::Tensor forward(const Kernel& kernel, const SearchSpace& space, std::span<const Config> configs, bool training);
  // One Adam step on the summed loss of the groups; returns the loss. Each group is a kernel and
  // some of its successful measurements.
  struct Group {
    const Kernel* kernel;
    const SearchSpace* space;
    std::vector<Config> configs;
    std::vector<float> log_seconds;
  };
  double train_step(const std::vector<Group>& groups);
  // Standardizes the network's inputs with statistics of these groups' kernels and configs.
  void fit_input_statistics(const std::vector<Group>& groups);
  // Sets the output offset to the groups' mean measured log seconds (hybrid: the mean of measured
  // minus analytical log seconds), so the first steps rank instead of shifting.
  void fit_output_offset(const std::vector<Group>& groups);
  // Refits the output calibration by least squares of measured on predicted log seconds over the
  // groups (kept only if the slope is positive, so the order never flips).
  void calibrate(const std::vector<Group>& groups);
  // Drops cached features and embeddings (after a vocabulary change or a weight update).
  void invalidate(bool features);
};

// `count` successful measurements of `measurements`, drawn without replacement (all if fewer).
GnnCostModel::State::Group sample_group(const Kernel& kernel, const SearchSpace& space,
                                        std::span<const Measurement> measurements, std::size_t count, Rng& rng);

}  // namespace perftune
