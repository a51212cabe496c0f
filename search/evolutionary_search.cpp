#include "search/evolutionary_search.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <stdexcept>
#include <unordered_set>

#include <tbb/parallel_for.h>

#include "search/parent_selection.h"
#include "search/random_search.h"
#include "search/random_streams.h"
#include "search/top_candidates.h"
#include "search/warmup.h"

namespace perftune {

namespace {

// Random stream ids that keep the population fill apart from the children's streams.
constexpr std::uint64_t kFillStream = 0x66696c6c;  // "fill"

double score_scale(const CostModel& model, const std::vector<float>& scores) {
  // Absolute models predict log seconds, where exp(-delta) is the relative speed (Ansor's
  // throughput weighting); ranking models have no unit, so their spread stands in for one.
  return model.predicts_absolute_time() ? 1.0 : score_spread(scores);
}

}  // namespace

std::vector<Config> EvolutionarySearch::propose(const SearchContext& context, std::size_t n) {
  if (!context.model) throw std::invalid_argument("evolutionary search needs a cost model");
  if (auto random = warmup_proposals(context, n, options_.warmup)) return std::move(*random);
  const SearchSpace& space = context.space;
  const std::size_t size = std::max<std::size_t>(2, options_.population);

  std::vector<Config> population;
  std::unordered_set<Config, ConfigHash> seen;
  const auto ranked = context.history.ranked_ok();
  const std::size_t from_measured = std::min(ranked.size(), static_cast<std::size_t>(options_.measured_share * size));
  for (std::size_t i = 0; i < from_measured; ++i) {
    const Config& config = context.history.entries()[ranked[i]].config;
    if (seen.insert(config).second) population.push_back(config);
  }
  // The last round's population carries on (its unmeasured members): evolution continues across
  // rounds, like annealing chains, instead of restarting from random configs every round.
  for (const Config& config : population_) {
    if (population.size() >= size) break;
    if (!context.history.contains(config) && seen.insert(config).second) population.push_back(config);
  }
  Rng fill_rng = stream_rng({context.seed, context.round, kFillStream});
  for (Config& config : sample_unmeasured(space, context.history, population, size - population.size(), fill_rng))
    if (seen.insert(config).second) population.push_back(std::move(config));

  TopCandidates top(std::max<std::size_t>(n, 1));
  for (std::size_t generation = 0;; ++generation) {
    const std::vector<float> scores = predict_scores(*context.model, context.kernel, space, population);
    for (std::size_t i = 0; i < population.size(); ++i)
      if (!context.history.contains(population[i])) top.offer(scores[i], population[i]);
    // The first generation is always scored; later ones only within the round's deadline.
    if (generation == options_.generations || population.size() < 2 || context.deadline.passed()) break;

    const FitnessWheel wheel(fitness_from_scores(scores, score_scale(*context.model, scores)));
    std::vector<std::optional<Config>> children(size);
    tbb::parallel_for(std::size_t{0}, size, [&](std::size_t i) {
      Rng rng = stream_rng({context.seed, context.round, generation, i});
      const Config& parent = population[wheel.draw(rng)];
      if (uniform_unit(rng) < options_.mutation_probability) children[i] = mutate(space, parent, options_.mutation, rng);
      else children[i] = crossover(space, parent, population[wheel.draw(rng)], rng);
    });
    std::vector<Config> next;
    seen.clear();
    for (auto& child : children)  // in child order: thread-independent
      if (child && seen.insert(*child).second) next.push_back(std::move(*child));
    // Too few distinct children (a small or crowded space): top up with fresh random configs.
    Rng top_up = stream_rng({context.seed, context.round, generation, kFillStream});
    for (Config& config : sample_unmeasured(space, context.history, next, size - next.size(), top_up))
      if (seen.insert(config).second) next.push_back(std::move(config));
    if (next.empty()) break;
    population = std::move(next);
  }
  population_ = std::move(population);
  return top.best_first();
}

}  // namespace perftune
