#include "search/mutation.h"

#include <algorithm>
#include <vector>

namespace perftune {

namespace {

// A value of `knob` other than `current`, uniformly among the others (any value if `current` is
// not in the domain). The domain has at least two values.
std::int64_t other_value(const Knob& knob, std::int64_t current, Rng& rng) {
  const auto at = std::lower_bound(knob.values.begin(), knob.values.end(), current);
  if (at == knob.values.end() || *at != current) return knob.values[uniform_index(rng, knob.values.size())];
  std::size_t pick = uniform_index(rng, knob.values.size() - 1);
  if (pick >= static_cast<std::size_t>(at - knob.values.begin())) ++pick;
  return knob.values[pick];
}

}  // namespace

std::optional<Config> mutate(const SearchSpace& space, const Config& parent, const MutationWeights& weights,
                             Rng& rng, int attempts) {
  std::vector<std::size_t> movable;
  for (std::size_t k = 0; k < space.dimension(); ++k)
    if (space.knobs()[k].values.size() > 1) movable.push_back(k);
  if (movable.empty()) return std::nullopt;
  const double total = weights.random_value + weights.neighbour_step + weights.several_knobs;
  for (int attempt = 0; attempt < attempts; ++attempt) {
    Config child = parent;
    const double rule = uniform_unit(rng) * total;
    const std::size_t k = movable[uniform_index(rng, movable.size())];
    const Knob& knob = space.knobs()[k];
    // With one movable knob, changing several is changing that one.
    if (rule < weights.random_value || (rule >= weights.random_value + weights.neighbour_step && movable.size() < 2)) {
      child.values[k] = other_value(knob, parent.values[k], rng);
    } else if (rule < weights.random_value + weights.neighbour_step) {
      const int index = space.index_of(k, parent.values[k]);
      const int last = static_cast<int>(knob.values.size()) - 1;
      int next = index + (uniform_index(rng, 2) == 0 ? -1 : 1);
      if (index < 0) next = static_cast<int>(uniform_index(rng, knob.values.size()));
      else if (next < 0) next = 1;
      else if (next > last) next = last - 1;
      child.values[k] = knob.values[next];
    } else {
      const std::size_t count = 2 + uniform_index(rng, std::min(kSeveralKnobsMax, movable.size()) - 1);
      std::vector<std::size_t> order = movable;
      for (std::size_t i = 0; i < count && i < order.size(); ++i) {  // partial Fisher-Yates
        std::swap(order[i], order[i + uniform_index(rng, order.size() - i)]);
        const Knob& chosen = space.knobs()[order[i]];
        child.values[order[i]] = other_value(chosen, parent.values[order[i]], rng);
      }
    }
    if (child != parent && space.contains(child)) return child;
  }
  return std::nullopt;
}

std::optional<Config> crossover(const SearchSpace& space, const Config& a, const Config& b, Rng& rng, int attempts) {
  for (int attempt = 0; attempt < attempts; ++attempt) {
    Config child = a;
    for (std::size_t k = 0; k < child.values.size(); ++k)
      if (uniform_index(rng, 2) == 1) child.values[k] = b.values[k];
    if (child != a && child != b && space.contains(child)) return child;
  }
  return std::nullopt;
}

}  // namespace perftune
