#include "surrogate/evaluation/ranking_metrics.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <stdexcept>

namespace perftune {

namespace {

// Sum over runs of equal values of t(t-1)/2, for a sequence sorted so equal values are adjacent.
template <typename Equal>
std::int64_t tied_pairs(std::size_t n, Equal equal) {
  std::int64_t pairs = 0, run = 1;
  for (std::size_t i = 1; i <= n; ++i) {
    if (i < n && equal(i - 1, i)) {
      ++run;
    } else {
      pairs += run * (run - 1) / 2;
      run = 1;
    }
  }
  return pairs;
}

// Sorts `values` by merge sort and returns the number of inversions (swaps a bubble sort would do).
std::int64_t count_inversions(std::vector<double>& values) {
  const std::size_t n = values.size();
  std::vector<double> buffer(n);
  std::int64_t inversions = 0;
  for (std::size_t width = 1; width < n; width *= 2) {
    for (std::size_t lo = 0; lo < n; lo += 2 * width) {
      const std::size_t mid = std::min(lo + width, n), hi = std::min(lo + 2 * width, n);
      std::size_t i = lo, j = mid, out = lo;
      while (i < mid && j < hi) {
        if (values[j] < values[i]) {
          inversions += static_cast<std::int64_t>(mid - i);
          buffer[out++] = values[j++];
        } else {
          buffer[out++] = values[i++];
        }
      }
      while (i < mid) buffer[out++] = values[i++];
      while (j < hi) buffer[out++] = values[j++];
    }
    values.swap(buffer);
  }
  return inversions;
}

double mean(const std::vector<double>& values) {
  if (values.empty()) return std::numeric_limits<double>::quiet_NaN();
  return std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size());
}

}  // namespace

double kendall_tau(std::span<const double> x, std::span<const double> y) {
  if (x.size() != y.size()) throw std::invalid_argument("kendall_tau: sequences differ in length");
  const std::size_t n = x.size();
  if (n < 2) return 0.0;
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return x[a] < x[b] || (x[a] == x[b] && y[a] < y[b]);
  });
  const std::int64_t ties_x = tied_pairs(n, [&](std::size_t i, std::size_t j) { return x[order[i]] == x[order[j]]; });
  const std::int64_t ties_xy = tied_pairs(n, [&](std::size_t i, std::size_t j) {
    return x[order[i]] == x[order[j]] && y[order[i]] == y[order[j]];
  });
  std::vector<double> y_sorted_by_x(n);
  for (std::size_t i = 0; i < n; ++i) y_sorted_by_x[i] = y[order[i]];
  const std::int64_t swaps = count_inversions(y_sorted_by_x);  // leaves y sorted
  const std::int64_t ties_y = tied_pairs(n, [&](std::size_t i, std::size_t j) { return y_sorted_by_x[i] == y_sorted_by_x[j]; });
  const std::int64_t total = static_cast<std::int64_t>(n) * static_cast<std::int64_t>(n - 1) / 2;
  const double denominator = std::sqrt(static_cast<double>(total - ties_x) * static_cast<double>(total - ties_y));
  if (denominator == 0.0) return 0.0;
  const std::int64_t concordant_minus_discordant = total - ties_x - ties_y + ties_xy - 2 * swaps;
  return static_cast<double>(concordant_minus_discordant) / denominator;
}

double top_k_slowdown(std::span<const double> predicted, std::span<const double> measured, std::size_t k) {
  if (predicted.size() != measured.size()) throw std::invalid_argument("top_k_slowdown: sequences differ in length");
  if (measured.empty() || k == 0) return 0.0;
  std::vector<std::size_t> order(predicted.size());
  std::iota(order.begin(), order.end(), 0);
  k = std::min(k, order.size());
  std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(k), order.end(),
                    [&](std::size_t a, std::size_t b) { return predicted[a] < predicted[b] || (predicted[a] == predicted[b] && a < b); });
  double best_pick = std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i < k; ++i) best_pick = std::min(best_pick, measured[order[i]]);
  const double best = *std::min_element(measured.begin(), measured.end());
  return best > 0 ? (best_pick - best) / best : 0.0;
}

double mean_absolute_percentage_error(std::span<const double> predicted_seconds, std::span<const double> measured_seconds) {
  if (predicted_seconds.size() != measured_seconds.size()) throw std::invalid_argument("MAPE: sequences differ in length");
  double total = 0.0;
  std::size_t count = 0;
  for (std::size_t i = 0; i < measured_seconds.size(); ++i) {
    if (measured_seconds[i] <= 0) continue;
    total += std::abs(predicted_seconds[i] - measured_seconds[i]) / measured_seconds[i];
    ++count;
  }
  return count ? total / static_cast<double>(count) : std::numeric_limits<double>::quiet_NaN();
}

void RankingMetricsAccumulator::add_kernel(std::span<const double> predicted, std::span<const double> measured,
                                           bool predicted_is_seconds) {
  if (measured.empty()) return;
  taus_.push_back(kendall_tau(predicted, measured));
  top1_.push_back(top_k_slowdown(predicted, measured, 1));
  top5_.push_back(top_k_slowdown(predicted, measured, 5));
  top10_.push_back(top_k_slowdown(predicted, measured, 10));
  if (predicted_is_seconds) mape_.push_back(mean_absolute_percentage_error(predicted, measured));
}

RankingMetrics RankingMetricsAccumulator::average() const {
  RankingMetrics metrics;
  metrics.kernels = taus_.size();
  metrics.kendall_tau = mean(taus_);
  metrics.top1_slowdown = mean(top1_);
  metrics.top5_slowdown = mean(top5_);
  metrics.top10_slowdown = mean(top10_);
  metrics.mape = mean(mape_);
  return metrics;
}

}  // namespace perftune
