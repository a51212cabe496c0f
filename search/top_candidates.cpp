#include "search/top_candidates.h"

#include <cmath>
#include <iterator>

namespace perftune {

bool TopCandidates::offer(float score, const Config& config) {
  if (capacity_ == 0 || std::isnan(score) || kept_.count(config)) return false;
  if (ranked_.size() >= capacity_) {
    const auto worst = std::prev(ranked_.end());
    if (!(std::make_pair(score, config) < *worst)) return false;
    kept_.erase(worst->second);
    ranked_.erase(worst);
  }
  ranked_.emplace(score, config);
  kept_.insert(config);
  return true;
}

std::vector<Config> TopCandidates::best_first() const {
  std::vector<Config> result;
  result.reserve(ranked_.size());
  for (const auto& [score, config] : ranked_) result.push_back(config);
  return result;
}

}  // namespace perftune
