#include "search/strategy.h"

#include <cmath>
#include <limits>

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

}  // namespace perftune
