#pragma once
// The learned cost model: featurizer + GnnModel behind the CostModel interface. The header is
// free of libtorch (pimpl) so that search/ and autotuner/ can hold one without its compile cost;
// they normally get one through learned_model.h.
#include <memory>
#include <span>
#include <string>

#include "surrogate/cost_model.h"
#include "surrogate/features/feature_vocabulary.h"
#include "surrogate/gnn/gnn_params.h"
#include "surrogate/gnn/train_options.h"

namespace perftune {

class GnnCostModel : public CostModel {
 public:
  // A model with freshly initialized weights (torch::manual_seed(options.seed) first, so the same
  // seed gives the same weights). An empty vocabulary is fine: update() extends it.
  GnnCostModel(GnnParams params, FeatureVocabulary vocabulary, TrainOptions options);
  ~GnnCostModel() override;
  GnnCostModel(const GnnCostModel&) = delete;
  GnnCostModel& operator=(const GnnCostModel&) = delete;

  std::string name() const override { return "learned"; }
  // Batched: features once per kernel (cached by key), then one network call per batch and member;
  // with late join the kernel's graph embedding is also cached until the weights change. An
  // ensemble predicts the mean of its members' log seconds; a hybrid trained with
  // correction_scales, analytical + factor x (that mean - analytical). Thread-safe.
  void predict(const Kernel& kernel, const SearchSpace& space, std::span<const Config> configs,
               std::span<float> log_seconds) override;
  // Online learning: adds the successful measurements to a replay buffer and takes
  // options.update_steps Adam steps on this kernel plus replayed ones, for every ensemble member.
  // Failed ones are ignored.
  void update(const Kernel& kernel, const SearchSpace& space, std::span<const Measurement> measurements) override;

  // Networks in the ensemble (TrainOptions::ensemble; 1 for a single model).
  std::size_t ensemble_size() const;
  // One member's prediction, as predict() gives the ensemble's (e.g. to see how much members
  // disagree), without the shrink towards the analytical model that predict() applies to a hybrid
  // trained with correction_scales. Throws std::out_of_range for member >= ensemble_size().
  void predict_member(std::size_t member, const Kernel& kernel, const SearchSpace& space, std::span<const Config> configs,
                      std::span<float> log_seconds);

  // The configured training loss over a kernel's successful measurements (no gradient step).
  double loss(const Kernel& kernel, const SearchSpace& space, std::span<const Measurement> measurements);

  // Writes `checkpoint` (JSON: schema version, hyper-parameters, vocabulary, knob normalization,
  // `extra`) and the weights beside it (same stem, ".pt"; one file for all ensemble members). Throws std::runtime_error naming the path.
  void save(const std::string& checkpoint, const nlohmann::ordered_json& extra = {}) const;
  // Throws InputError naming the file for another schema version, a malformed JSON file, or weights
  // with a missing, renamed or reshaped parameter or a missing ensemble member. A single-model
  // checkpoint written before ensembles existed loads as a one-member ensemble.
  static std::unique_ptr<GnnCostModel> load(const std::string& checkpoint);

  const GnnParams& params() const;
  const FeatureVocabulary& vocabulary() const;
  const TrainOptions& options() const;

  struct State;  // libtorch internals (surrogate/gnn/gnn_state.h), used by the trainer
  State& state() { return *state_; }

 private:
  std::unique_ptr<State> state_;
};

}  // namespace perftune
