#pragma once
// Evolutionary search on the cost model, after Ansor's SketchPolicy::EvolutionarySearch (Zheng et
// al., OSDI 2020): an initial population of the best measured configs, then the unmeasured ones of
// the last round's population (evolution continues across rounds, like annealing chains), then
// random ones; each
// generation scores the whole population in one predict(), draws parents in proportion to
// predicted speed, and makes children by weighted mutation (probability mutation_probability) or
// crossover; populations are de-duplicated. The best unmeasured configs seen are proposed. At
// context.deadline no further generation is bred (the initial population is always scored).
// With options.warmup, the first measurements are random (search/warmup.h).
#include <cstddef>

#include "search/mutation.h"
#include "search/strategy.h"

namespace perftune {

struct EvolutionOptions {
  std::size_t population = 2048;      // Ansor's evolutionary_search_population default
  std::size_t generations = 4;        // Ansor's evolutionary_search_num_iters default
  double mutation_probability = 0.85; // Ansor's evolutionary_search_mutation_prob default
  double measured_share = 0.2;        // Ansor's sample_init_use_measured_ratio: best measured seed the population
  std::size_t warmup = 0;             // random proposals until this many measurements (search/warmup.h)
  MutationWeights mutation;
};

class EvolutionarySearch : public Strategy {
 public:
  explicit EvolutionarySearch(EvolutionOptions options = {}) : options_(options) {}
  std::string name() const override { return "evolution"; }
  bool needs_model() const override { return true; }
  std::vector<Config> propose(const SearchContext& context, std::size_t n) override;
  // The population the last propose() ended with (empty before the first); the next round starts
  // from its unmeasured members.
  const std::vector<Config>& population() const { return population_; }

 private:
  EvolutionOptions options_;
  std::vector<Config> population_;
};

}  // namespace perftune
