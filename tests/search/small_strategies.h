#pragma once
// Test helper: every strategy by its campaign name, with the model-based ones shrunk (tens of
// chains, a population of hundreds) so tests stay fast; the defaults run in bench/search_bench.
#include <memory>
#include <string>

#include "search/evolutionary_search.h"
#include "search/exhaustive_search.h"
#include "search/measured_annealing.h"
#include "search/measured_evolution.h"
#include "search/random_search.h"
#include "search/simulated_annealing.h"

namespace perftune::testing {

inline std::unique_ptr<Strategy> small_strategy(const std::string& name) {
  if (name == "annealing") {
    AnnealingOptions options;
    options.chains = 32;
    options.steps = 150;
    return std::make_unique<SimulatedAnnealing>(options);
  }
  if (name == "evolution") {
    EvolutionOptions options;
    options.population = 256;
    return std::make_unique<EvolutionarySearch>(options);
  }
  if (name == "exhaustive") return std::make_unique<ExhaustiveSearch>();
  if (name == "measured_annealing") return std::make_unique<MeasuredAnnealing>();
  if (name == "measured_evolution") return std::make_unique<MeasuredEvolution>();
  if (name == "random") return std::make_unique<RandomSearch>();
  throw std::invalid_argument("no strategy named " + name);
}

}  // namespace perftune::testing
