#pragma once
// A share of each round's proposals taken near configs known to be good, the rest from a wrapped
// model-based strategy. Kaufman et al. (MLSys 2021) tune from the compiler's own choice and Ansor
// seeds its evolution with the best measured states; here both are the anchors: the campaign's
// trusted first configs (SearchContext::anchors: its default and the compiler's heuristic) and the
// best configs measured so far. Before the target's first measurement a pre-trained model is least
// reliable far from anything known: on halide_live's matmul the models' first global picks ran
// slower than the heuristic, while configs a few knobs from the heuristic ran faster than it.
//
// The neighbourhood is searched on the model, without randomness: a beam over one-knob changes
// (any other value of one knob, SearchSpace::one_knob_changes), `depth` steps from the anchors,
// keeping the `beam` best-scored configs of each step to expand; its best-scored unmeasured
// configs fill `share` of the proposals. The wrapped strategy fills the rest, and all of it when
// there is no anchor (no measure_first and nothing measured yet).
#include <cstddef>
#include <memory>

#include "search/strategy.h"

namespace perftune {

struct AnchoredOptions {
  double share = 0.5;                // of each round's proposals, from the anchors' neighbourhood
  std::size_t depth = 3;             // one-knob steps from an anchor (the best configs of halide_live's
                                     // dense kernels are 2-4 knobs from the heuristic)
  std::size_t beam = 16;             // configs expanded per step
  std::size_t measured_anchors = 2;  // best measured configs that join the anchors
  // Each part of the proposals (near the anchors, the wrapped strategy's) is picked from this many
  // times as many of its best-scored configs by knob-value coverage (diverse_pick.h); 1: the best.
  std::size_t diversity_pool = 1;
  // Or each part is the best of this many times as many by a second model, the re-ranker: one
  // too slow to search with, such as trees that read what each config compiles to
  // (hardware/halide/loop_nest_features.h). The tuner updates it as it updates the search's model
  // (Strategy::learning_models).
  std::size_t rerank_pool = 1;
  std::shared_ptr<CostModel> reranker;
};

class AnchoredSearch : public Strategy {
 public:
  AnchoredSearch(std::unique_ptr<Strategy> inner, AnchoredOptions options);
  std::string name() const override { return inner_->name() + " anchored"; }
  bool needs_model() const override { return true; }
  // Up to round(share * n) configs from the neighbourhood, best-scored first, then the wrapped
  // strategy's proposals that are not among them, up to n in all; with a diversity pool, each part
  // is the diverse pick of a wider pool of its own, so each starts at its best-scored config.
  std::vector<Config> propose(const SearchContext& context, std::size_t n) override;
  // The re-ranker, when there is one: the tuner updates it with each measurement.
  std::vector<CostModel*> learning_models() override;

 private:
  // The first k of `ranked` (best-scored first), or its diverse pick, or the re-ranker's best k.
  std::vector<Config> pick(const SearchContext& context, std::vector<Config> ranked, std::size_t k) const;

  // Feeds the re-ranker the history's measurements since the last call.

  std::unique_ptr<Strategy> inner_;
  AnchoredOptions options_;
};

// The best-scored unmeasured configs (at most n) within `options.depth` one-knob changes of the
// anchors (context.anchors in the space, then the best measured), found by the beam above; the
// anchors themselves are never proposed. Empty without anchors. Deterministic; at least one step
// is searched, further steps only within context.deadline.
std::vector<Config> near_anchors(const SearchContext& context, std::size_t n, const AnchoredOptions& options);

}  // namespace perftune
