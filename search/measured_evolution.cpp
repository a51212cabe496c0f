#include "search/measured_evolution.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <unordered_set>

#include "search/parent_selection.h"
#include "search/random_search.h"
#include "search/random_streams.h"

namespace perftune {

namespace {
// Child draws per wanted config before topping up with random configs.
constexpr std::size_t kTriesPerChild = 16;
}  // namespace

std::vector<Config> MeasuredEvolution::propose(const SearchContext& context, std::size_t n) {
  Rng rng = stream_rng({context.seed, context.round, 0x65766f6c /* "evol" */});
  const auto ranked = context.history.ranked_ok();
  std::vector<Config> children;
  if (ranked.size() >= 2) {
    const std::size_t count = std::min(ranked.size(), std::max<std::size_t>(2, options_.parents));
    std::vector<float> log_seconds;
    for (std::size_t i = 0; i < count; ++i)
      log_seconds.push_back(static_cast<float>(std::log(context.history.entries()[ranked[i]].result.seconds)));
    const FitnessWheel wheel(fitness_from_scores(log_seconds, 1.0));
    auto parent = [&]() -> const Config& { return context.history.entries()[ranked[wheel.draw(rng)]].config; };
    std::unordered_set<Config, ConfigHash> taken;
    for (std::size_t tries = 0; children.size() < n && tries < n * kTriesPerChild; ++tries) {
      const Config& first = parent();
      std::optional<Config> child = uniform_unit(rng) < options_.mutation_probability
                                        ? mutate(context.space, first, options_.mutation, rng)
                                        : crossover(context.space, first, parent(), rng);
      if (child && !context.history.contains(*child) && taken.insert(*child).second) children.push_back(std::move(*child));
    }
  }
  // Too little measured to breed from, or a bred-out neighbourhood: explore at random.
  for (Config& config : sample_unmeasured(context.space, context.history, children, n - children.size(), rng))
    children.push_back(std::move(config));
  return children;
}

}  // namespace perftune
