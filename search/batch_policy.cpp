#include "search/batch_policy.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <stdexcept>
#include <unordered_map>
#include <unordered_set>

#include "ir/random.h"
#include "ir/stable_hash.h"

namespace perftune {

namespace {

double euclidean(const std::vector<double>& a, const std::vector<double>& b) {
  double sum = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const double apart = a[i] - b[i];
    sum += apart * apart;
  }
  return std::sqrt(sum);
}

std::vector<Config> space_filling_batch(const SearchSpace& space, std::vector<Config> ranked, std::size_t k,
                                        const std::vector<std::vector<double>>& measured, std::uint64_t seed,
                                        const std::function<bool(const Config&)>& taken) {
  // The candidates: the proposals and as many random configs (a search on a flat model proposes
  // whatever its walk met), each once and unmeasured.
  Rng rng(seed);
  std::vector<Config> candidates;
  std::unordered_set<Config, ConfigHash> seen;
  auto add = [&](const Config& config) {
    if (!taken(config) && seen.insert(config).second) candidates.push_back(config);
  };
  for (const Config& config : ranked) add(config);
  const std::size_t wanted = std::max<std::size_t>(2 * candidates.size(), 20 * k);
  for (std::size_t tries = 0; candidates.size() < wanted && tries < 4 * wanted; ++tries) add(space.sample(rng));
  std::vector<std::vector<double>> coords;
  for (const Config& config : candidates) coords.push_back(space.index_coords(config));
  // Each candidate's distance to the nearest chosen or measured config; greedy maximin picks the
  // farthest each time (with nothing measured, the first is the first proposal: any one would do).
  std::vector<double> nearest(candidates.size(), std::numeric_limits<double>::infinity());
  for (const auto& point : measured)
    for (std::size_t c = 0; c < candidates.size(); ++c) nearest[c] = std::min(nearest[c], euclidean(coords[c], point));
  std::vector<Config> batch;
  std::vector<bool> picked(candidates.size(), false);
  for (std::size_t slot = 0; slot < std::min(k, candidates.size()); ++slot) {
    std::size_t best = candidates.size();
    for (std::size_t c = 0; c < candidates.size(); ++c) {
      if (picked[c]) continue;
      if (best == candidates.size() || nearest[c] > nearest[best]) best = c;
    }
    picked[best] = true;
    batch.push_back(candidates[best]);
    for (std::size_t c = 0; c < candidates.size(); ++c) nearest[c] = std::min(nearest[c], euclidean(coords[c], coords[best]));
  }
  for (Config& config : ranked) batch.push_back(std::move(config));  // the tuner skips repeats
  return batch;
}

// The kernel's `count` best measured configs, best first.
std::vector<Config> incumbents(const std::vector<PredictiveBelief::Measured>& measured, std::size_t count) {
  std::vector<std::size_t> order;
  for (std::size_t j = 0; j < measured.size(); ++j)
    if (measured[j].log_seconds) order.push_back(j);
  const std::size_t m = std::min(count, order.size());
  std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(m), order.end(),
                    [&](std::size_t x, std::size_t y) { return *measured[x].log_seconds < *measured[y].log_seconds; });
  std::vector<Config> best;
  for (std::size_t j = 0; j < m; ++j) best.push_back(measured[order[j]].config);
  return best;
}

}  // namespace

BatchPolicy::BatchPolicy(BatchPolicyOptions options) : options_(options) {
  if (options_.batch_pool == 0) throw std::invalid_argument("BatchPolicy: batch_pool must be at least 1");
}

std::size_t BatchPolicy::pool(std::size_t k) const { return options_.batch == BatchChoice::kThompson ? k * options_.batch_pool : k; }

std::vector<Config> BatchPolicy::choose(CostModel* model, const Kernel& kernel, const SearchSpace& space, std::vector<Config> ranked,
                                        std::size_t k, std::uint64_t seed, std::size_t round,
                                        const std::function<bool(const Config&)>& taken) const {
  if (!model || k == 0 || (options_.batch == BatchChoice::kTop && !options_.space_filling_start)) return ranked;
  const std::unique_ptr<PredictiveBelief> belief = model->belief(kernel, space);
  if (!belief) return ranked;
  if (options_.space_filling_start && !belief->fitted()) {
    std::vector<std::vector<double>> measured;
    for (const PredictiveBelief::Measured& point : belief->measured()) measured.push_back(space.index_coords(point.config));
    return space_filling_batch(space, std::move(ranked), k, measured, splitmix64(seed ^ splitmix64(round + 1)), taken);
  }
  if (options_.batch != BatchChoice::kThompson) return ranked;
  // The candidates: the proposals, then each source's favourites among the configs scored so far.
  std::vector<Config> candidates;
  std::unordered_set<Config, ConfigHash> seen;
  for (const Config& config : ranked)
    if (!taken(config) && seen.insert(config).second) candidates.push_back(config);
  if (options_.source_favourites > 0)
    for (const Config& favourite :
         belief->source_favourites(options_.source_favourites, [&](const Config& config) { return !seen.count(config) && !taken(config); }))
      if (seen.insert(favourite).second) candidates.push_back(favourite);
  std::vector<bool> local;  // one knob away from an incumbent (empty: no neighbourhood asked for)
  if (options_.incumbent_neighbours > 0) {
    std::unordered_map<Config, std::size_t, ConfigHash> index;
    for (std::size_t c = 0; c < candidates.size(); ++c) index.emplace(candidates[c], c);
    local.assign(candidates.size(), false);
    for (const Config& incumbent : incumbents(belief->measured(), options_.incumbent_neighbours))
      for (Config& neighbour : space.one_knob_changes(incumbent)) {
        if (taken(neighbour)) continue;
        if (const auto it = index.find(neighbour); it != index.end()) {
          local[it->second] = true;
        } else {
          index.emplace(neighbour, candidates.size());
          candidates.push_back(std::move(neighbour));
          local.push_back(true);
        }
      }
  }
  if (candidates.empty()) return ranked;
  const std::unique_ptr<CandidateScores> scores = belief->at(candidates);
  const std::vector<double> expected = scores->expected();
  const std::size_t count = candidates.size();
  Rng rng(splitmix64(seed ^ splitmix64(round ^ splitmix64(stable_hash(kernel.key())))));
  std::vector<Config> batch;
  std::vector<bool> picked(count, false);
  const std::size_t local_count = static_cast<std::size_t>(std::count(local.begin(), local.end(), true));
  const std::size_t local_slots = std::min(options_.local_slots, local_count);
  for (std::size_t slot = 0; slot < std::min(k, count); ++slot) {
    // The first slot and the local ones take the best at the fitted belief; a local slot whose
    // neighbours the earlier slots already took falls back to every candidate.
    bool local_left = false;
    for (std::size_t c = 0; c < local.size(); ++c) local_left = local_left || (local[c] && !picked[c]);
    const bool local_slot = slot > 0 && slot <= local_slots && local_left;
    const bool drawn = slot > local_slots;
    const std::vector<double> drawn_scores = drawn ? scores->draw(rng) : std::vector<double>{};
    const std::vector<double>& score = drawn ? drawn_scores : expected;
    std::size_t best = count;
    for (std::size_t c = 0; c < count; ++c) {
      if (picked[c] || (local_slot && !local[c])) continue;
      if (best == count || score[c] < score[best]) best = c;
    }
    picked[best] = true;
    batch.push_back(candidates[best]);
  }
  for (Config& config : ranked) batch.push_back(std::move(config));  // the tuner skips repeats
  return batch;
}

}  // namespace perftune
