#include "search/exhaustive_search.h"

#include <algorithm>
#include <numeric>
#include <stdexcept>

namespace perftune {

std::vector<Config> ExhaustiveSearch::propose(const SearchContext& context, std::size_t n) {
  if (enumerated_for_ != &context.space) {
    const auto size = context.space.size(options_.max_configs);
    if (!size || *size > options_.max_configs)
      throw std::length_error("exhaustive search: the space has more than " + std::to_string(options_.max_configs) +
                              " configs; use annealing or evolution");
    all_ = context.space.enumerate(options_.max_configs);
    enumerated_for_ = &context.space;
  }
  std::vector<Config> left;
  for (const Config& config : all_)
    if (!context.history.contains(config)) left.push_back(config);
  if (!context.model) {
    if (left.size() > n) left.resize(n);
    return left;
  }
  std::vector<float> scores(left.size());
  for (std::size_t begin = 0; begin < left.size(); begin += options_.batch) {
    const std::size_t end = std::min(left.size(), begin + options_.batch);
    const auto batch = predict_scores(*context.model, context.kernel, context.space,
                                      std::span<const Config>(left).subspan(begin, end - begin));
    std::copy(batch.begin(), batch.end(), scores.begin() + static_cast<std::ptrdiff_t>(begin));
  }
  std::vector<std::size_t> order(left.size());
  std::iota(order.begin(), order.end(), 0);
  const std::size_t keep = std::min(n, order.size());
  std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(keep), order.end(),
                    [&](std::size_t a, std::size_t b) { return scores[a] < scores[b] || (scores[a] == scores[b] && a < b); });
  std::vector<Config> result;
  for (std::size_t i = 0; i < keep; ++i) result.push_back(left[order[i]]);
  return result;
}

}  // namespace perftune
