#pragma once
// Model-free simulated annealing, for comparison with search on a model: like Kernel Tuner's
// simulated_annealing strategy, each chain sits on a measured config and proposes one unmeasured
// mutation of it per round; once that is measured the chain moves there by the Metropolis rule on
// the relative runtime change. Failed or never-measured proposals are rejected.
#include <cstddef>
#include <optional>
#include <vector>

#include "search/mutation.h"
#include "search/strategy.h"

namespace perftune {

struct MeasuredAnnealingOptions {
  std::size_t chains = 0;           // 0: one chain per config the first propose() asks for
  // Temperatures are in units of the relative runtime change, as in Kernel Tuner's
  // simulated_annealing. Its defaults (T=1, alpha=0.995) hardly cool within the tens of steps a
  // chain gets from a budget of ~50-500 measurements (0.995^50 = 0.78), so ours start colder and
  // cool faster: a 10% slower config is accepted with probability 1/e at first; after 50 chain
  // steps T = 0.1 * 0.95^50 = 0.008, so only changes of about 1% still pass.
  double start_temperature = 0.1;
  double min_temperature = 0.001;   // Kernel Tuner's T_min default
  double cooling = 0.95;            // T *= cooling per chain step
  MutationWeights mutation;
};

class MeasuredAnnealing : public Strategy {
 public:
  explicit MeasuredAnnealing(MeasuredAnnealingOptions options = {}) : options_(options) {}
  std::string name() const override { return "measured_annealing"; }
  std::vector<Config> propose(const SearchContext& context, std::size_t n) override;

 private:
  struct Chain {
    std::optional<Config> current;  // measured and ok
    double current_seconds = 0.0;
    std::optional<Config> pending;  // proposed, maybe not measured yet
    std::size_t steps = 0;
  };
  MeasuredAnnealingOptions options_;
  std::vector<Chain> chains_;
};

}  // namespace perftune
