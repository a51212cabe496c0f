#include "surrogate/gnn/correction_shrinkage.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "surrogate/evaluation/ranking_metrics.h"

namespace perftune {

namespace {
// Scores closer than this are ties (sums of a few dozen taus and slowdowns in double precision
// differ by far less when they are equal in exact arithmetic).
constexpr double kTieTolerance = 1e-12;
}  // namespace

std::vector<double> shrink(std::span<const double> analytical, std::span<const double> learned, double scale) {
  if (analytical.size() != learned.size())
    throw std::invalid_argument("shrink: " + std::to_string(analytical.size()) + " analytical but " +
                                std::to_string(learned.size()) + " learned predictions");
  std::vector<double> out(analytical.size());
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = analytical[i] + scale * (learned[i] - analytical[i]);
  return out;
}

double kernel_selection_weight(const std::string& rule, std::size_t configs) {
  const double n = static_cast<double>(configs);
  if (rule == "uniform") return 1.0;
  if (rule == "log_configs") return std::log(std::max(n, 2.0));  // a scored kernel has >= 2 configs
  if (rule == "configs") return std::max(n, 1.0);
  throw std::invalid_argument("unknown kernel weight rule \"" + rule + "\" (" + kernel_weight_rules_text() + ")");
}

std::string kernel_weight_rules_text() {
  std::string text;
  for (std::size_t i = 0; i < kKernelWeightRules.size(); ++i) {
    if (i > 0) text += i + 1 == kKernelWeightRules.size() ? " or " : ", ";
    text += "\"" + std::string(kKernelWeightRules[i]) + "\"";
  }
  return text;
}

ShrinkageChoice choose_shrinkage(std::span<const ShrinkageKernel> kernels, std::span<const double> scales,
                                 double top1_weight) {
  if (scales.empty()) throw std::invalid_argument("choose_shrinkage: no scale to choose from");
  for (double scale : scales)
    if (!(scale >= 0.0 && scale <= 1.0)) throw std::invalid_argument("choose_shrinkage: a scale outside [0, 1]");
  std::vector<double> sorted(scales.begin(), scales.end());
  std::sort(sorted.begin(), sorted.end());
  std::vector<const ShrinkageKernel*> scored;
  std::size_t candidates = 0;
  for (const ShrinkageKernel& kernel : kernels) {
    if (kernel.learned.empty()) throw std::invalid_argument("choose_shrinkage: a kernel without candidates");
    if (candidates == 0) candidates = kernel.learned.size();
    if (kernel.learned.size() != candidates)
      throw std::invalid_argument("choose_shrinkage: kernels with different numbers of candidates");
    if (!(kernel.weight > 0.0)) throw std::invalid_argument("choose_shrinkage: a kernel weight that is not positive");
    if (kernel.measured.size() >= 2) scored.push_back(&kernel);
  }
  double total_weight = 0.0;
  for (const ShrinkageKernel* kernel : scored) total_weight += kernel->weight;
  if (scored.empty()) throw std::invalid_argument("choose_shrinkage: no validation kernel with two configs");
  ShrinkageChoice best;
  best.score = -std::numeric_limits<double>::infinity();
  for (double scale : sorted)
    for (std::size_t c = 0; c < candidates; ++c) {
      double tau = 0.0, top1 = 0.0;
      for (const ShrinkageKernel* kernel : scored) {
        const std::vector<double> blended = shrink(kernel->analytical, kernel->learned[c], scale);
        tau += kernel->weight * kendall_tau(blended, kernel->measured);
        top1 += kernel->weight * top_k_slowdown(blended, kernel->measured, 1);
      }
      tau /= total_weight;
      top1 /= total_weight;
      const double score = tau - top1_weight * top1;
      if (score > best.score + kTieTolerance) best = {c, scale, tau, top1, score};
    }
  return best;
}

}  // namespace perftune
