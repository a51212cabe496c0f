#include "search/measured_annealing.h"

#include <algorithm>
#include <cmath>
#include <unordered_set>

#include "search/random_search.h"
#include "search/random_streams.h"

namespace perftune {

namespace {
// Mutation draws per chain before it restarts from a random config: its neighbourhood is then
// (nearly) all measured or invalid.
constexpr int kMutationTries = 8;
}  // namespace

std::vector<Config> MeasuredAnnealing::propose(const SearchContext& context, std::size_t n) {
  const SearchSpace& space = context.space;
  if (chains_.empty()) chains_.resize(std::max<std::size_t>(1, options_.chains ? options_.chains : n));

  std::vector<Config> proposals;
  std::unordered_set<Config, ConfigHash> taken;
  for (std::size_t c = 0; c < chains_.size(); ++c) {
    Chain& chain = chains_[c];
    Rng rng = stream_rng({context.seed, context.round, c});
    // Judge the last proposal if it has been measured; keep it pending otherwise.
    if (chain.pending) {
      if (const MeasureResult* result = context.history.find(*chain.pending)) {
        if (result->ok()) {
          bool accept = !chain.current;
          if (chain.current) {
            const double temperature = std::max(
                options_.min_temperature, options_.start_temperature * std::pow(options_.cooling, chain.steps));
            const double delta = (result->seconds - chain.current_seconds) / chain.current_seconds;
            accept = delta < 0 || uniform_unit(rng) < std::exp(-delta / temperature);
          }
          if (accept) {
            chain.current = *chain.pending;
            chain.current_seconds = result->seconds;
          }
        }
        ++chain.steps;
        chain.pending.reset();
      } else if (!taken.count(*chain.pending)) {
        taken.insert(*chain.pending);
        proposals.push_back(*chain.pending);
        continue;
      }
    }
    std::optional<Config> next;
    if (chain.current)
      for (int attempt = 0; attempt < kMutationTries && !next; ++attempt) {
        auto moved = mutate(space, *chain.current, options_.mutation, rng);
        if (moved && !context.history.contains(*moved) && !taken.count(*moved)) next = std::move(moved);
      }
    if (!next) {  // a new chain, a failed start, or a neighbourhood used up: restart
      std::vector<Config> excluded(taken.begin(), taken.end());
      std::sort(excluded.begin(), excluded.end());
      auto fresh = sample_unmeasured(space, context.history, excluded, 1, rng);
      if (fresh.empty()) continue;
      if (!chain.current) chain.steps = 0;
      next = std::move(fresh.front());
    }
    taken.insert(*next);
    chain.pending = next;
    proposals.push_back(std::move(*next));
  }
  if (proposals.size() > n) proposals.resize(n);
  return proposals;
}

}  // namespace perftune
