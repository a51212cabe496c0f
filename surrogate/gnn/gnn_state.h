#pragma once
// Internals of GnnCostModel shared by its own file, the trainer and the checkpoint code. Includes
// libtorch: never include it from a header outside surrogate/.
#include <deque>
#include <memory>
#include <mutex>
#include <unordered_map>

#include <torch/torch.h>

#include "ir/random.h"
#include "surrogate/analytical/analytical_model.h"
#include "surrogate/features/feature_cache.h"
#include "surrogate/gnn/gnn_cost_model.h"
#include "surrogate/gnn/gnn_model.h"

namespace perftune {

// One kernel's successful measurements kept for replay during online updates.
struct ReplayEntry {
  Kernel kernel;
  std::shared_ptr<const SearchSpace> space;
  std::vector<Measurement> measurements;
};

// One network of an ensemble (TrainOptions::ensemble) with what belongs to its weights alone.
struct EnsembleMember {
  GnnModel model{nullptr};
  std::unique_ptr<torch::optim::Adam> optimizer;  // created on the member's first training step
  Rng rng;                                        // its sampler: members see different batches
  std::unordered_map<std::string, torch::Tensor> embeddings;  // late join, eval mode, by kernel key
};

// Member m's seed: `seed` itself for member 0 (a one-member ensemble is the single model it always
// was), else seed mixed with m by the golden-ratio constant (splitmix64's increment), so nearby
// seeds' members never coincide.
std::uint64_t member_seed(std::uint64_t seed, std::size_t member);

struct GnnCostModel::State {
  State(GnnParams params_in, FeatureVocabulary vocabulary_in, TrainOptions options_in);

  GnnParams params;
  FeatureVocabulary vocabulary;
  TrainOptions options;
  FeatureCache cache{vocabulary};
  std::vector<EnsembleMember> members;  // options.ensemble networks, each initialized with member_seed
  std::unique_ptr<AnalyticalModel> analytical;  // the hybrid feature's estimates (params.analytical_device)
  Rng rng;  // samples shared by all members (input statistics)
  std::deque<ReplayEntry> replay;
  bool trained = false;  // false until a training step or a checkpoint load set the weights
  // Hybrid: predict() gives analytical + correction_scale * (ensemble mean - analytical) in log
  // seconds (surrogate/gnn/correction_shrinkage.h); 1 leaves the ensemble's prediction as it is.
  double correction_scale = 1.0;
  std::recursive_mutex mutex;
  std::unordered_map<std::string, GraphTensors> graphs;  // by kernel key

  const GraphTensors& graph(const Kernel& kernel);
  // Config features [configs, kConfigFeatureWidth], the hybrid block filled when the model has one.
  torch::Tensor config_features(const Kernel& kernel, const KernelGraphFeatures& features, const SearchSpace& space,
                                std::span<const Config> configs);
  // Member `member`'s predicted log seconds [configs], with gradients when `training` (train mode),
  // else without.
  torch::Tensor forward(const Kernel& kernel, const SearchSpace& space, std::span<const Config> configs, bool training,
                        std::size_t member);
  // The ensemble's prediction: the mean over members of their log seconds [configs] (eval mode;
  // features computed once for all members), shrunk towards the analytical model by correction_scale.
  torch::Tensor predict(const Kernel& kernel, const SearchSpace& space, std::span<const Config> configs);
  // A kernel and some of its successful measurements: what a training step ranks.
  struct Group {
    const Kernel* kernel;
    const SearchSpace* space;
    std::vector<Config> configs;
    std::vector<float> log_seconds;
  };
  // A program measured under some of its fusion placements (TrainOptions::program_weight): each
  // placement's predicted runtime is the sum of its kernels', each kernel under one schedule.
  struct SumTerm {
    const Kernel* kernel;
    const SearchSpace* space;
    Config schedule;
  };
  struct SumGroup {
    std::vector<SumTerm> terms;                        // distinct kernel schedules
    std::vector<std::vector<std::size_t>> placements;  // per placement, its terms
    std::vector<float> log_seconds;                    // per placement, measured
  };
  // A sum group's predicted log runtime per placement [placements], with gradients (train mode).
  torch::Tensor forward_sum(const SumGroup& sum, std::size_t member);
  // One Adam step of member `member` on the groups' summed loss plus options.program_weight x the
  // loss of the sum groups' placements; returns the loss.
  double train_step(const std::vector<Group>& groups, std::size_t member, const std::vector<SumGroup>& sums = {});
  // The gradients of that step, left in member `member`'s parameters' grad (added to what is
  // there): with options.gradient_sync, this rank computes its groups' share and the ranks' sums
  // are summed, so every rank ends with the gradients of the whole batch. Returns the loss.
  double backward(const std::vector<Group>& groups, std::size_t member, const std::vector<SumGroup>& sums = {});
  // Standardizes every member's inputs with statistics of these groups' kernels and configs.
  void fit_input_statistics(const std::vector<Group>& groups);
  // Sets every member's output offset to the groups' mean measured log seconds (hybrid: the mean of
  // measured minus analytical log seconds), so the first steps rank instead of shifting.
  void fit_output_offset(const std::vector<Group>& groups);
  // Refits member `member`'s output calibration by least squares of measured on predicted log
  // seconds over the groups (kept only if the slope is positive, so the order never flips).
  void calibrate(const std::vector<Group>& groups, std::size_t member);
  // Drops cached embeddings (after a weight update) and, with `features`, cached features (after a
  // vocabulary change).
  void invalidate(bool features);

 private:
  struct Inputs {
    const GraphTensors* graph;
    torch::Tensor configs;  // [configs, kConfigFeatureWidth]
    torch::Tensor fused;    // early join with fuse knobs: [configs, nodes]; else undefined
  };
  Inputs inputs(const Kernel& kernel, const SearchSpace& space, std::span<const Config> configs);
  torch::Tensor evaluate(const Inputs& in, const std::string& key, std::size_t member);
};

// `count` successful measurements of `measurements`, drawn without replacement (all if fewer).
GnnCostModel::State::Group sample_group(const Kernel& kernel, const SearchSpace& space,
                                        std::span<const Measurement> measurements, std::size_t count, Rng& rng);
// A group favouring the fast end (TrainOptions::fast_share): `fastest_first` holds successful
// measurements sorted by runtime; round(fast_share * count) of the group come from its first
// `fast_count`, the rest from the others, each part drawn without replacement (fewer when a part
// runs out). The fast part comes first in the group.
GnnCostModel::State::Group sample_fast_group(const Kernel& kernel, const SearchSpace& space,
                                             std::span<const Measurement> fastest_first, std::size_t fast_count,
                                             std::size_t count, double fast_share, Rng& rng);
// Makes `group` hold `measurement` (TrainOptions::tiling_in_groups): it replaces the last draw
// (of the rest, in a fast group) unless the group holds it already or is empty.
void hold_in_group(GnnCostModel::State::Group& group, const Measurement& measurement);

}  // namespace perftune
