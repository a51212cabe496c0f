#pragma once
// Model-free evolutionary search, for comparison with search on a model: parents are the best
// measured configs, drawn in proportion to measured speed; children come from the same weighted
// mutation rules and crossover as the model-based version, unmeasured and de-duplicated.
#include <cstddef>

#include "search/mutation.h"
#include "search/strategy.h"

namespace perftune {

struct MeasuredEvolutionOptions {
  std::size_t parents = 20;           // Kernel Tuner's genetic_algorithm popsize default
  double mutation_probability = 0.85; // as the model-based search (Ansor's default)
  MutationWeights mutation;
};

class MeasuredEvolution : public Strategy {
 public:
  explicit MeasuredEvolution(MeasuredEvolutionOptions options = {}) : options_(options) {}
  std::string name() const override { return "measured_evolution"; }
  std::vector<Config> propose(const SearchContext& context, std::size_t n) override;

 private:
  MeasuredEvolutionOptions options_;
};

}  // namespace perftune
