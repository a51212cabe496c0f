#pragma once
// Trains a GnnCostModel on measured kernels: grouped batches (configs of one kernel together),
// the configured loss, Adam, early stopping on validation Kendall's tau (optionally traded against
// validation top-1 slowdown, TrainOptions::select_top1_weight), and a progress line per epoch.
// An ensemble (TrainOptions::ensemble) trains its members one after another, each with its own
// seed, batches, validation-selected epoch and (validation "kernels") held-out kernels. A fixed
// seed gives the same model (torch::manual_seed + seeded samplers; no wall-clock stopping unless
// time_limit_seconds is hit).
#include <functional>
#include <iosfwd>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "ir/corpus.h"
#include "surrogate/fusion/program_kernels.h"
#include "surrogate/gnn/gnn_cost_model.h"

namespace perftune {

// One ensemble member's training.
struct MemberReport {
  std::uint64_t seed = 0;
  int epochs = 0;      // epochs run
  int best_epoch = 0;  // the epoch whose weights were kept (1-based; 0: the untrained network, for a
                       // hybrid the analytical model itself)
  double best_validation_tau = 0.0;   // NaN without validation data
  double best_validation_top1 = 0.0;  // mean top-1 slowdown of the kept weights on validation
  double best_selection_score = std::numeric_limits<double>::quiet_NaN();  // train_gnn's `selection` of the kept weights
  double seconds = 0.0;
  bool time_limit_hit = false;        // stopped by time_limit_seconds, not by epochs or patience
  std::vector<std::string> validation_kernels;  // validation "kernels": the training kernels it held out

  nlohmann::ordered_json to_json() const;
};

struct TrainReport {
  int epochs = 0;              // the most epochs any member ran
  // The latest epoch any member kept: 0 only if every member kept its untrained weights (for a
  // hybrid: the model IS the analytical model). Per member: `members`.
  int best_epoch = 0;
  double best_validation_tau = 0.0;   // mean over members of their kept weights' validation tau
  double best_validation_top1 = 0.0;  // mean over members of their kept weights' validation top-1 slowdown
  double best_selection_score = std::numeric_limits<double>::quiet_NaN();  // mean over members; NaN without `selection`
  double final_train_loss = 0.0;      // the last member's last epoch
  double seconds = 0.0;
  std::size_t samples = 0;     // configs forwarded in training steps (all members)
  bool config_holdout = false;  // validation used held-out configs of the training kernels
  // The pooled choice (TrainOptions::epoch_selection "shared" or correction_scales): the factor
  // kept for the hybrid's correction (1: none), the epoch all members kept ("shared"; else -1), and
  // the chosen blend's mean tau and top-1 slowdown over every member's validation kernels (NaN
  // when no pooled choice was made).
  double correction_scale = 1.0;
  int shared_epoch = -1;
  double pooled_validation_tau = std::numeric_limits<double>::quiet_NaN();
  double pooled_validation_top1 = std::numeric_limits<double>::quiet_NaN();
  std::vector<MemberReport> members;

  nlohmann::ordered_json to_json() const;
};

// A model-selection score of the model being trained, higher is better (e.g. the fusion task's tau
// on training programs, surrogate/fusion/fusion_evaluation.h): train_gnn adds it to the validation score
// at every epoch (the untrained model's included), so the epoch kept is the one best at both. In
// an ensemble it is called with the member being trained alone (epoch selection "member" only).
using SelectionScore = std::function<double(CostModel& model)>;

// Builds the vocabulary from `train` and trains a new model on it. `validation` kernels decide
// early stopping; when empty, options.validation says what is held out of `train` instead
// (a share of each kernel's configs, or whole kernels; for early stopping only: reported figures
// come from a separate test split). Throws std::invalid_argument if no training kernel has two
// successful measurements, or validation "kernels" finds fewer than two such kernels. Writes one
// progress line per epoch to `progress` when non-null.
// `selection`, when set, joins model selection (see SelectionScore; reported as
// TrainReport::best_selection_score, the mean over members). `programs` are trained on through
// the fusion task's sum when options.program_weight > 0, and their tiling gives the config
// options.tiling_in_groups keeps in every group. Throws std::invalid_argument for correction_scales
// on a model without the analytical feature, a `selection` with epoch selection "shared", or
// tiling_in_groups without `programs`.
std::unique_ptr<GnnCostModel> train_gnn(const std::vector<const MeasuredKernel*>& train,
                                        const std::vector<const MeasuredKernel*>& validation, const GnnParams& params,
                                        const TrainOptions& options, std::ostream* progress,
                                        TrainReport* report = nullptr, const SelectionScore& selection = {},
                                        const ProgramTraining* programs = nullptr);

}  // namespace perftune
