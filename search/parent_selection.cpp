#include "search/parent_selection.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace perftune {

FitnessWheel::FitnessWheel(const std::vector<double>& weights) {
  double total = 0.0;
  for (double w : weights) {
    total += (std::isfinite(w) && w > 0) ? w : 0.0;
    cumulative_.push_back(total);
  }
  if (!(total > 0))
    for (std::size_t i = 0; i < cumulative_.size(); ++i) cumulative_[i] = static_cast<double>(i + 1);
}

std::size_t FitnessWheel::draw(Rng& rng) const {
  const double target = uniform_unit(rng) * cumulative_.back();
  const auto it = std::upper_bound(cumulative_.begin(), cumulative_.end(), target);
  return std::min<std::size_t>(static_cast<std::size_t>(it - cumulative_.begin()), cumulative_.size() - 1);
}

std::vector<double> fitness_from_scores(const std::vector<float>& scores, double scale) {
  float best = std::numeric_limits<float>::infinity();
  for (float s : scores) best = std::min(best, s);
  std::vector<double> fitness;
  fitness.reserve(scores.size());
  for (float s : scores)
    fitness.push_back(std::isfinite(s) ? std::exp(-(static_cast<double>(s) - best) / scale) : 0.0);
  return fitness;
}

}  // namespace perftune
