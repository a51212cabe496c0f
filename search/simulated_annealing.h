#pragma once
// Simulated annealing on the cost model, as in AutoTVM's SimulatedAnnealingOptimizer: many
// parallel chains (TBB), each step mutates every chain's state, scores all new states in one
// batched predict(), and accepts by the Metropolis rule under a linearly cooling temperature.
// Chains are kept across rounds (they continue from where the last round left them); a chain that
// accepted nothing for `restart_after` steps restarts from a random config. The best unmeasured
// configs seen on the way are proposed. A round's steps end early at context.deadline (after the
// first step), and the cooling schedule then runs on the share of the time allowance used.
// With options.warmup, the first measurements are random (search/warmup.h).
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
  std::size_t warmup = 0;           // random proposals until this many measurements (search/warmup.h)
  MutationWeights mutation;
};

class SimulatedAnnealing : public Strategy {
 public:
  explicit SimulatedAnnealing(AnnealingOptions options = {}) : options_(options) {}
  std::string name() const override { return "annealing"; }
  bool needs_model() const override { return true; }
  std::vector<Config> propose(const SearchContext& context, std::size_t n) override;
  // Where each chain stands after the last propose() (empty before the first): the next round
  // continues from these states.
  const std::vector<Config>& chain_states() const { return states_; }

 private:
  AnnealingOptions options_;
  std::vector<Config> states_;  // one per chain, kept across rounds
};

}  // namespace perftune
