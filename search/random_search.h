#pragma once
// Uniform random sampling of unmeasured configs: the baseline every other strategy must beat, and
// the source of the tuner's epsilon-greedy exploration.
#include "search/strategy.h"

namespace perftune {

class RandomSearch : public Strategy {
 public:
  std::string name() const override { return "random"; }
  std::vector<Config> propose(const SearchContext& context, std::size_t n) override;
};

// Up to n distinct valid configs in neither `history` nor `exclude`, drawn uniformly from `rng`.
// When few unmeasured configs are left it enumerates the rest (if the space is enumerable), so
// it returns fewer than n only when the space is nearly exhausted.
std::vector<Config> sample_unmeasured(const SearchSpace& space, const History& history,
                                      const std::vector<Config>& exclude, std::size_t n, Rng& rng);

}  // namespace perftune
