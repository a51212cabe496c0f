#pragma once
// Drawing parents in proportion to their fitness, shared by the model-based and measured
// evolutionary strategies.
#include <cstddef>
#include <vector>

#include "ir/random.h"

namespace perftune {

class FitnessWheel {
 public:
  // Weights must be >= 0 with a positive sum; a zero-sum or empty wheel draws uniformly.
  explicit FitnessWheel(const std::vector<double>& weights);
  std::size_t draw(Rng& rng) const;
  std::size_t size() const { return cumulative_.size(); }

 private:
  std::vector<double> cumulative_;
};

// Fitness from scores where lower is better (log seconds or seconds on a log scale):
// exp(-(score - best) / scale), i.e. the speed relative to the best when scores are log seconds
// and scale is 1, as in Ansor's throughput-proportional selection.
std::vector<double> fitness_from_scores(const std::vector<float>& scores, double scale);

}  // namespace perftune
