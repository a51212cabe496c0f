#include "search/simulated_annealing.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <tbb/parallel_for.h>

#include "search/random_streams.h"
#include "search/top_candidates.h"
#include "search/warmup.h"

namespace perftune {

std::vector<Config> SimulatedAnnealing::propose(const SearchContext& context, std::size_t n) {
  if (!context.model) throw std::invalid_argument("simulated annealing needs a cost model");
  if (auto random = warmup_proposals(context, n, options_.warmup)) return std::move(*random);
  const SearchSpace& space = context.space;
  const std::size_t chains = std::max<std::size_t>(1, options_.chains);
  std::vector<Rng> rngs;
  rngs.reserve(chains);
  for (std::size_t c = 0; c < chains; ++c) rngs.push_back(stream_rng({context.seed, context.round, c}));

  // Chains start at random configs on the first round; afterwards they continue.
  if (states_.size() != chains) {
    states_.resize(chains);
    tbb::parallel_for(std::size_t{0}, chains, [&](std::size_t c) { states_[c] = space.sample(rngs[c]); });
  }
  std::vector<float> scores = predict_scores(*context.model, context.kernel, space, states_);
  const double temperature_unit = score_spread(scores);  // temperatures are stated in score spreads

  TopCandidates top(std::max<std::size_t>(n, 1));
  auto offer_all = [&](const std::vector<Config>& configs, const std::vector<float>& config_scores) {
    bool changed = false;
    for (std::size_t c = 0; c < configs.size(); ++c)  // in chain order: the result is thread-independent
      if (!context.history.contains(configs[c])) changed |= top.offer(config_scores[c], configs[c]);
    return changed;
  };
  offer_all(states_, scores);

  std::vector<Config> candidates(chains);
  std::vector<std::size_t> idle(chains, 0);
  std::size_t unchanged = 0;
  for (std::size_t step = 0; step < options_.steps; ++step) {
    // At least one step a round, so kept chains always move on; then the deadline may end it.
    if (step > 0 && context.deadline.passed()) break;
    // The schedule runs on steps or on the time allowance, whichever is further along: a round cut
    // short by its deadline still cools down to the end temperature.
    const double progress =
        std::max(static_cast<double>(step) / static_cast<double>(options_.steps), context.deadline.used_share());
    const double temperature = temperature_unit * (options_.start_temperature +
                                                   (options_.end_temperature - options_.start_temperature) * progress);
    tbb::parallel_for(std::size_t{0}, chains, [&](std::size_t c) {
      if (idle[c] >= options_.restart_after) {
        candidates[c] = space.sample(rngs[c]);
        return;
      }
      auto moved = mutate(space, states_[c], options_.mutation, rngs[c]);
      candidates[c] = moved ? std::move(*moved) : states_[c];
    });
    const std::vector<float> candidate_scores = predict_scores(*context.model, context.kernel, space, candidates);
    tbb::parallel_for(std::size_t{0}, chains, [&](std::size_t c) {
      const bool restart = idle[c] >= options_.restart_after;
      const double delta = static_cast<double>(candidate_scores[c]) - scores[c];
      const bool accept = restart || delta < 0 ||
                          (temperature > 0 && std::isfinite(delta) && uniform_unit(rngs[c]) < std::exp(-delta / temperature));
      if (accept && candidates[c] != states_[c]) {
        states_[c] = candidates[c];
        scores[c] = candidate_scores[c];
        idle[c] = 0;
      } else {
        ++idle[c];
      }
    });
    unchanged = offer_all(candidates, candidate_scores) ? 0 : unchanged + 1;
    if (options_.early_stop > 0 && unchanged >= options_.early_stop && top.size() >= n) break;
  }
  return top.best_first();
}

}  // namespace perftune
