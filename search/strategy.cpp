#include "search/strategy.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace perftune {

std::vector<float> predict_scores(CostModel& model, const Kernel& kernel, const SearchSpace& space,
                                  std::span<const Config> configs) {
  std::vector<float> scores(configs.size(), 0.0f);
  if (configs.empty()) return scores;
  model.predict(kernel, space, configs, scores);
  for (float& score : scores)
    if (std::isnan(score)) score = std::numeric_limits<float>::infinity();
  return scores;
}

std::vector<Config> rank_by_model(CostModel& model, const Kernel& kernel, const SearchSpace& space, std::vector<Config> configs) {
  const std::vector<float> scores = predict_scores(model, kernel, space, configs);
  std::vector<std::size_t> order(configs.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return scores[a] < scores[b]; });
  std::vector<Config> ranked;
  ranked.reserve(configs.size());
  for (std::size_t i : order) ranked.push_back(std::move(configs[i]));
  return ranked;
}

double score_spread(std::span<const float> scores) {
  double sum = 0.0, sum_sq = 0.0;
  std::size_t n = 0;
  for (float s : scores)
    if (std::isfinite(s)) {
      sum += s;
      sum_sq += static_cast<double>(s) * s;
      ++n;
    }
  if (n < 2) return 1.0;
  const double mean = sum / static_cast<double>(n);
  const double variance = std::max(0.0, sum_sq / static_cast<double>(n) - mean * mean);
  return variance > 0 ? std::sqrt(variance) : 1.0;
}

}  // namespace perftune
