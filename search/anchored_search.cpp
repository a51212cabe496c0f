#include "search/anchored_search.h"

#include <algorithm>
#include <cmath>
#include <span>
#include <stdexcept>
#include <unordered_set>

#include "search/diverse_pick.h"
#include "search/top_candidates.h"

namespace perftune {

std::vector<Config> near_anchors(const SearchContext& context, std::size_t n, const AnchoredOptions& options) {
  if (n == 0 || options.depth == 0) return {};
  const SearchSpace& space = context.space;
  std::vector<Config> frontier;
  std::unordered_set<Config, ConfigHash> visited;
  auto anchor = [&](const Config& config) {
    if (space.contains(config) && visited.insert(config).second) frontier.push_back(config);
  };
  for (const Config& config : context.anchors) anchor(config);
  const auto ranked = context.history.ranked_ok();
  for (std::size_t i = 0; i < std::min(options.measured_anchors, ranked.size()); ++i)
    anchor(context.history.entries()[ranked[i]].config);

  TopCandidates best(n);
  for (std::size_t step = 0; step < options.depth && !frontier.empty(); ++step) {
    if (step > 0 && context.deadline.passed()) break;
    std::vector<Config> candidates;
    for (const Config& from : frontier)
      for (Config& config : space.one_knob_changes(from))
        if (visited.insert(config).second) candidates.push_back(std::move(config));
    if (candidates.empty()) break;
    const std::vector<float> scores = predict_scores(*context.model, context.kernel, space, candidates);
    // Measured configs are waypoints (the beam may pass through them), never proposals.
    TopCandidates next(std::max<std::size_t>(options.beam, 1));
    for (std::size_t i = 0; i < candidates.size(); ++i) {
      next.offer(scores[i], candidates[i]);
      if (!context.history.contains(candidates[i])) best.offer(scores[i], candidates[i]);
    }
    frontier = next.best_first();
  }
  return best.best_first();
}

AnchoredSearch::AnchoredSearch(std::unique_ptr<Strategy> inner, AnchoredOptions options)
    : inner_(std::move(inner)), options_(options) {
  if (!inner_ || !inner_->needs_model())
    throw std::invalid_argument("anchored search wraps a model-based strategy (annealing or evolution)");
  if (!(options_.share >= 0 && options_.share <= 1)) throw std::invalid_argument("the anchored share must be in [0, 1]");
}

std::vector<Config> AnchoredSearch::propose(const SearchContext& context, std::size_t n) {
  if (!context.model) throw std::invalid_argument("anchored search needs a cost model");
  const auto local_count = static_cast<std::size_t>(std::lround(options_.share * static_cast<double>(n)));
  const std::size_t pool = std::max(options_.diversity_pool, options_.reranker ? options_.rerank_pool : 1);
  std::vector<Config> proposed = pick(context, near_anchors(context, local_count * pool, options_), local_count);
  // The wrapped strategy searches every round, so its state (chains, population) carries on
  // as it would alone; it is asked for n (times the pool) so that overlaps with the local picks
  // still leave enough.
  std::unordered_set<Config, ConfigHash> taken(proposed.begin(), proposed.end());
  std::vector<Config> global;
  for (Config& config : inner_->propose(context, n * pool))
    if (taken.insert(config).second) global.push_back(std::move(config));
  global = pick(context, std::move(global), n - std::min(n, proposed.size()));
  for (Config& config : global) {
    if (proposed.size() >= n) break;
    proposed.push_back(std::move(config));
  }
  return proposed;
}

std::vector<CostModel*> AnchoredSearch::learning_models() {
  if (!options_.reranker) return {};
  return {options_.reranker.get()};
}

std::vector<Config> AnchoredSearch::pick(const SearchContext& context, std::vector<Config> ranked, std::size_t k) const {
  if (options_.reranker && options_.rerank_pool > 1 && ranked.size() > k)
    ranked = rank_by_model(*options_.reranker, context.kernel, context.space, std::move(ranked));
  else if (options_.diversity_pool > 1)
    return diverse_pick(ranked, k);
  if (ranked.size() > k) ranked.resize(k);
  return ranked;
}

}  // namespace perftune
