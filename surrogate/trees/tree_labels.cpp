#include "surrogate/trees/tree_labels.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace perftune {

bool higher_is_faster(const std::string& objective) { return objective.rfind("rank:", 0) == 0; }

std::vector<float> tree_labels(const std::string& objective, std::span<const double> seconds) {
  const std::size_t n = seconds.size();
  std::vector<float> labels(n, 0.0f);
  if (n == 0) return labels;
  if (higher_is_faster(objective)) {
    std::vector<std::size_t> order(n);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return seconds[a] < seconds[b]; });
    const double top = n > 1 ? static_cast<double>(n - 1) : 1.0;
    std::size_t rank = 0;
    for (std::size_t i = 0; i < n; ++i) {
      if (i > 0 && seconds[order[i]] != seconds[order[i - 1]]) rank = i;
      labels[order[i]] = static_cast<float>(10.0 * (top - static_cast<double>(rank)) / top);
    }
    return labels;
  }
  double mean = 0.0;
  for (double s : seconds) mean += std::log(s) / static_cast<double>(n);
  for (std::size_t i = 0; i < n; ++i) labels[i] = static_cast<float>(std::log(seconds[i]) - mean);
  return labels;
}

}  // namespace perftune
