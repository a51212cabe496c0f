#pragma once
// How a GNN is trained (the "train" object of TRAIN.json / EVAL.json). Defaults follow the
// TpuGraphs tile baseline (ListMLE + 0.02 MSE, Adam lr 1e-3, configs of one kernel per group)
// unless a comment says otherwise.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ir/json_view.h"
#include "surrogate/gnn/gradient_sync.h"

namespace perftune {

struct LossWeights {
  double list_mle = 1.0;            // ListMLE over a kernel's sampled configs
  double mse = 0.02;                // MSE on log runtime (what the fusion task needs)
  double pairwise_hinge = 0.0;      // mean over ordered pairs of max(0, margin - (p_slow - p_fast))
  double pairwise_logistic = 0.0;   // mean over ordered pairs of log(1 + exp(-(p_slow - p_fast)))
  double pairwise_lambda = 0.0;     // the logistic pairs weighted towards the top (rank_losses.h)
  double hinge_margin = 0.1;        // in log seconds: ~10% runtime difference (AutoTVM-like rank margin)
};

struct TrainOptions {
  LossWeights loss;
  double learning_rate = 1e-3;        // Adam
  int epochs = 40;                    // upper bound; early stopping usually ends sooner
  int steps_per_epoch = 50;           // optimizer steps per epoch
  int kernels_per_step = 4;           // kernel groups per step (gradients summed)
  int configs_per_kernel = 32;        // configs sampled per kernel group (TpuGraphs uses 10; 10-64 work)
  // Groups favouring the fast end: this share of each group is drawn from the fastest
  // `fast_quantile` of the kernel's training configs, the rest from the others. A uniform group of
  // 64 out of thousands seldom holds two of the few configs a tuner wants, so a ranking loss
  // learns the bulk's order and barely the top's: gpu_transfer's per-source models, trained on
  // one GPU each, picked a config 0-58% off their own GPU's best (mean 13.8%; 4.6% with half of
  // each group from the fastest 5%, 0.2% from the fastest 1%). 0: uniform groups, as before.
  // Offline training only: an online update's groups stay uniform.
  double fast_share = 0.0;
  double fast_quantile = 0.05;
  // Groups holding the tiling config: every group of a kernel whose config under the training
  // programs' tiling (ProgramTraining::tiling: the backend's own schedule, which the fusion task
  // prices and a tuner measures first) was measured holds that config, and config holdout never
  // takes it. A uniform group of a kernel with thousands of configs seldom holds it; on the Halide
  // corpora (4-18 configs per kernel: groups of 12 hold nearly all) only the holdout changes.
  // Needs the tiling (train_gnn's `programs`).
  bool tiling_in_groups = false;
  // Training through the fusion task's sum: each step also takes programs_per_step programs
  // measured under fusion placements (whole-program records of the training sources), predicts
  // placements_per_program of their placements as the sum of their kernels' predicted runtimes
  // (surrogate/fusion/program_kernels.h) and adds program_weight x the configured loss of those sums
  // against the measured program times. Kernel groups teach each kernel's runtime alone; a sum
  // of ~50%-off kernels misranks placements unless the errors between a placement's kernels are
  // trained too. 0: off. Needs the programs and their tiling (train_gnn's `programs`).
  double program_weight = 0.0;
  int programs_per_step = 2;
  int placements_per_program = 8;
  int patience = 8;                   // epochs without a better validation score before stopping
  // Model selection maximizes validation tau - select_top1_weight * mean top-1 slowdown: tau alone
  // (0) can keep an epoch that ranks the bulk well but misses the best config, which is what a
  // tuner pays for. 1 makes a 10% top-1 slowdown cost 0.1 of tau.
  double select_top1_weight = 0.0;
  int validation_configs = 2000;      // configs per validation kernel (a fixed sample) for tau
  // What early stopping and model selection score when the split gives no validation kernels:
  // "configs": validation_fraction of each training kernel's configs (the kernels are seen in
  // training, so this measures fit to known kernels); "kernels": validation_fraction of the
  // training kernels, whole (inner leave-kernels-out: it measures what the test split asks,
  // ranking kernels never seen). With an ensemble each member holds out its own kernels (a
  // rotating window over a seeded order), so together the members train on every kernel.
  std::string validation = "configs";
  double validation_fraction = 0.2;   // share held out for early stopping (of configs or kernels, as above)
  // Which epoch each ensemble member keeps. "member": its own best validation score (patience
  // stops it). "shared": every member trains all `epochs` and they all keep one epoch, the one
  // whose pooled score over every member's validation kernels is best; a rotating window of 3
  // kernels per member makes a per-member choice rest on 3 kernels, the pooled one on all of them.
  std::string epoch_selection = "member";
  // Hybrid only: factors in [0, 1] for the learned correction, chosen (with the shared epoch) on
  // the pooled validation kernels by tau - select_top1_weight * top-1 slowdown; the model then
  // predicts analytical + factor * (learned - analytical) (surrogate/gnn/correction_shrinkage.h).
  // Empty: no shrinkage (factor 1).
  std::vector<double> correction_scales;
  // How the pooled choice above (and epoch selection "shared") weights each validation kernel:
  // "uniform" (each counts once), "log_configs" (ln of its config count: a 2-config kernel's top-1
  // is a coin flip, a 579-config kernel's is what a tuner pays for) or "configs" (its count).
  // surrogate/gnn/correction_shrinkage.h, kernel_selection_weight.
  std::string select_kernel_weight = "uniform";
  // Networks trained with different seeds (member m: seed mixed with m; member 0 uses `seed` itself),
  // each keeping its own validation-selected epoch; the model predicts their mean log seconds.
  // Averaging independently initialized networks cuts the variance a single small-data model has
  // (Lakshminarayanan et al., "Deep Ensembles", NeurIPS 2017).
  int ensemble = 1;
  std::uint64_t seed = 1;             // torch::manual_seed and the sampler
  // A safety net, not the stopping rule: stop a member after this wall time (0: none). Shipped
  // configs end on epochs and patience, so a fixed seed gives the same model on a loaded machine.
  double time_limit_seconds = 0.0;
  // Online update (CostModel::update): Adam steps per call and the replay buffer's size.
  int update_steps = 8;
  int replay_kernels = 16;            // most recently updated kernels kept for replay
  int replay_configs = 512;           // measurements kept per kernel in the replay buffer
  // Data-parallel ranks (surrogate/gnn/gradient_sync.h) for offline training; not part of the JSON.
  GradientSync* gradient_sync = nullptr;

  // "ensemble", "validation", "epoch_selection", "correction_scales", "select_kernel_weight", the
  // fast-group pair and the program-sum trio are written only when not at their default, so
  // checkpoints and pre-trained model identities (experiments/pretraining/pretraining.h hashes this
  // JSON) from before they existed still match.
  nlohmann::ordered_json to_json() const;
  // Absent keys keep their default; unknown keys and out-of-range values are InputErrors.
  static TrainOptions from_json(const JsonView& json);
};

}  // namespace perftune
