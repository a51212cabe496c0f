#pragma once
// How well a model ranks one kernel's configs (the tile-size task) and predicts absolute time
// (the fusion task). Definitions from the paper's lineage (ARCHITECTURE.md, "Metrics").
// All functions take only successful measurements: callers drop failed configs first.
#include <cstddef>
#include <span>
#include <vector>

namespace perftune {

// Kendall's tau-b between two orders (ties in either count as neither concordant nor
// discordant), in O(n log n) (Knight's algorithm). 0 for fewer than two items or a constant side.
double kendall_tau(std::span<const double> x, std::span<const double> y);

// (best measured among the k configs the model predicts fastest - best measured) / best measured.
// k larger than the number of configs means all of them (slowdown 0). Ties in the prediction are
// broken by position, so a model that predicts a constant gets the first k configs.
double top_k_slowdown(std::span<const double> predicted, std::span<const double> measured, std::size_t k);

// Mean absolute percentage error, as a fraction (0.1 = 10%), over measured > 0.
double mean_absolute_percentage_error(std::span<const double> predicted_seconds,
                                      std::span<const double> measured_seconds);

// The per-kernel metrics averaged over kernels, as `perftune eval` reports them.
struct RankingMetrics {
  double kendall_tau = 0.0;
  double top1_slowdown = 0.0;
  double top5_slowdown = 0.0;
  double top10_slowdown = 0.0;
  double mape = 0.0;  // NaN when the model does not predict absolute time
  std::size_t kernels = 0;
};

// Accumulates per-kernel metrics and averages them.
class RankingMetricsAccumulator {
 public:
  // One kernel's predictions (seconds if absolute, else any order-preserving score) and measurements.
  void add_kernel(std::span<const double> predicted, std::span<const double> measured, bool predicted_is_seconds);
  RankingMetrics average() const;
  const std::vector<double>& per_kernel_tau() const { return taus_; }

 private:
  std::vector<double> taus_, top1_, top5_, top10_, mape_;
};

}  // namespace perftune
