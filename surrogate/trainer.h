#pragma once
// Trains a GnnCostModel on measured kernels: grouped batches (configs of one kernel together),
// the configured loss, Adam, early stopping on validation Kendall's tau (optionally traded against
// validation top-1 slowdown, TrainOptions::select_top1_weight), and a progress line per epoch. A fixed seed gives the same model (torch::manual_seed + a seeded sampler).
#include <functional>
#include <iosfwd>
#include <limits>
#include <memory>
#include <vector>

#include "ir/corpus.h"
#include "surrogate/gnn_cost_model.h"

namespace perftune {

struct TrainReport {
  int epochs = 0;              // epochs run
  int best_epoch = 0;          // the epoch whose weights were kept (1-based; 0: the untrained model)
  double best_validation_tau = 0.0;
  double best_validation_top1 = 0.0;  // mean top-1 slowdown of the kept weights on validation
  double best_selection_score = std::numeric_limits<double>::quiet_NaN();  // train_gnn's `selection` of the kept weights
  double final_train_loss = 0.0;
  double seconds = 0.0;
  std::size_t samples = 0;     // configs forwarded in training steps
  bool config_holdout = false;  // validation used held-out configs of the training kernels

  nlohmann::ordered_json to_json() const;
};

// A model-selection score of the model being trained, higher is better (e.g. the fusion task's tau
// on training programs, surrogate/fusion_evaluation.h): train_gnn adds it to the validation score
// at every epoch (the untrained model's included), so the epoch kept is the one best at both.
using SelectionScore = std::function<double(CostModel& model)>;

// Builds the vocabulary from `train` and trains a new model on it. `validation` kernels decide
// early stopping; when empty, a fixed share (options.validation_fraction) of each training
// kernel's configs is held out instead (for early stopping only; reported figures come from a
// separate test split). Throws std::invalid_argument if no training kernel has two successful
// measurements. Writes one progress line per epoch to `progress` when non-null. `selection`, when
// set, joins model selection (see SelectionScore; reported as TrainReport::best_selection_score).
std::unique_ptr<GnnCostModel> train_gnn(const std::vector<const MeasuredKernel*>& train,
                                        const std::vector<const MeasuredKernel*>& validation, const GnnParams& params,
                                        const TrainOptions& options, std::ostream* progress,
                                        TrainReport* report = nullptr, const SelectionScore& selection = {});

}  // namespace perftune
