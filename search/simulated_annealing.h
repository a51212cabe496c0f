#pragma once
// Simulated annealing on the cost model, as in AutoTVM's SimulatedAnnealingOptimizer: many
// parallel chains (TBB), each step mutates every chain's state, scores all new states in one
// batched predict(), and accepts by the Metropolis rule under a linearly cooling temperature.
// Chains are kept across rounds (they continue from where the last round left them); a chain that
// accepted nothing for `restart_after` steps restarts from a random config. The best unmeasured
// configs seen on the way are proposed.
#include <cstddef>
#include <vector>

#include "search/mutation.h"
#include "search/strategy.h"

namespace perftune {

struct AnnealingOptions {
  std::size_t chains = 128;         // AutoTVM's parallel_size default
  std::size_t steps = 500;          // AutoTVM's n_iter default
  std::size_t early_stop = 50;      // AutoTVM: stop when the kept best set is unchanged this many steps
  double start_temperature = 1.0;   // AutoTVM's temp=(1, 0), in units of the chains' score spread
  double end_temperature = 0.0;
  std::size_t restart_after = 100;  // steps without an accepted move before a chain restarts (ours)
  MutationWeights mutation;
};

class SimulatedAnnealing : public Strategy {
 public:
  explicit SimulatedAnnealing(AnnealingOptions options = {}) : options_(options) {}
  std::string name() const override { return "annealing"; }
  bool needs_model() const override { return true; }
  std::vector<Config> propose(const SearchContext& context, std::size_t n) override;

 private:
  AnnealingOptions options_;
  std::vector<Config> states_;  // one per chain, kept across rounds
};

}  // namespace perftune
