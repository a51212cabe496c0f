#pragma once
// Shrinking the hybrid's learned correction towards the analytical model, by a factor chosen on
// inner validation (kernels held out of training, never the test split):
//   blended log seconds = analytical + scale * (learned - analytical)
// Scale 0 is the analytical model exactly, scale 1 the learned model as trained. With 14 training
// kernels a correction can win on validation by chance and lose on a new kernel (TPU leave-one-out,
// experiments/RESULTS.md "model_study"); a factor picked on the pooled validation kernels of every
// ensemble member keeps the model at the analytical ranking unless the correction earns its place.
// Torch-free: the trainer fills the candidates, this file scores them.
#include <array>
#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace perftune {

// One validation kernel as a member that never trained on it sees it.
struct ShrinkageKernel {
  std::vector<double> measured;              // seconds, successful measurements only
  std::vector<double> analytical;            // the analytical model's log seconds, per config
  std::vector<std::vector<double>> learned;  // per candidate (e.g. an epoch's weights): log seconds per config
  double weight = 1.0;                       // its share of the pooled mean (> 0; kernel_selection_weight)
};

// The rules kernel_selection_weight knows (the train option's parser checks against this list).
inline constexpr std::array<std::string_view, 3> kKernelWeightRules = {"uniform", "log_configs", "configs"};
// "\"uniform\", \"log_configs\" or \"configs\"": the list above, for error messages.
std::string kernel_weight_rules_text();

// A validation kernel's weight in the pooled choice (TrainOptions::select_kernel_weight) for a
// kernel with `configs` measured configs: "uniform" 1; "log_configs" ln(configs), the information
// in picking the best of them (a 2-config kernel's top-1 is one coin flip, a 579-config kernel's
// is what a tuner pays for); "configs" the count itself. std::invalid_argument for another rule.
double kernel_selection_weight(const std::string& rule, std::size_t configs);

struct ShrinkageChoice {
  std::size_t candidate = 0;
  double scale = 1.0;
  double tau = 0.0;    // (weighted) mean over kernels of the chosen blend's Kendall's tau
  double top1 = 0.0;   // (weighted) mean top-1 slowdown
  double score = 0.0;  // tau - top1_weight * top1, what the choice maximized
};

// analytical + scale * (learned - analytical), element-wise (std::invalid_argument on a length mismatch).
std::vector<double> shrink(std::span<const double> analytical, std::span<const double> learned, double scale);

// The (candidate, scale) with the best mean over `kernels` (those with two configs or more, each
// counted by its weight) of tau - top1_weight * top-1 slowdown. Ties go to the smaller scale, then to the earlier candidate,
// so the choice stays at the analytical model unless validation prefers the correction. Every
// kernel must have the same number (> 0) of candidates, `scales` must be non-empty, each in [0, 1],
// one kernel must be scorable, and every weight positive (std::invalid_argument otherwise).
ShrinkageChoice choose_shrinkage(std::span<const ShrinkageKernel> kernels, std::span<const double> scales,
                                 double top1_weight);

}  // namespace perftune
