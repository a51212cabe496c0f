#pragma once
// How a tuner round chooses its k configs among the search's ranked proposals. By default the
// greedy top k. With a model that offers its posterior (surrogate/predictive_belief.h):
//   space-filling start: until the model's first fit, greedy maximin distance in the knob-index
//     cube among the proposals and as many random configs, away from what is measured (with no
//     prior every config scores the same, and a spread first batch tells the model most);
//   batch Thompson sampling: the batch is judged by its best config, so k near-identical picks
//     around one optimum of the current belief waste k - 1 measurements when that belief is wrong.
//     The first slot takes the best at the fitted belief; each further slot takes the best of its
//     own draw from the posterior. The candidates are pool(k) = batch_pool * k proposals, plus each
//     source's source_favourites best scored configs (the search ranks by the sources' mixture,
//     which need not reach any one source's favourites), plus, with incumbent_neighbours, every
//     unmeasured config one knob away from the best measured ones, of which local_slots slots
//     after the first take the best at the fitted belief (a model-ordered local search).
// TVM keeps batch choice in its search policy too; the model only predicts, learns and samples.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "ir/config.h"
#include "ir/kernel.h"
#include "ir/search_space.h"
#include "surrogate/cost_model.h"

namespace perftune {

enum class BatchChoice { kTop, kThompson };

struct BatchPolicyOptions {
  BatchChoice batch = BatchChoice::kTop;
  std::size_t batch_pool = 10;       // kThompson: proposals asked per batch slot (>= 1)
  std::size_t source_favourites = 0;  // kThompson: each source's own best scored configs added per round
  // kThompson: the candidates also hold every unmeasured config one knob away (any value of that
  // knob) from each of the kernel's incumbent_neighbours best measured configs, so the batch can
  // step off the target's own best configs (a local search the priors need not point to: the
  // sources' favourites can all be slower on the target than a neighbour of its incumbent).
  std::size_t incumbent_neighbours = 0;
  // kThompson: after the first slot, this many slots take the best of those neighbours at the
  // fitted belief (once the incumbent settles, its whole neighbourhood gets measured, so the result
  // is a one-knob local optimum of the target; the differences there are often finer than the
  // priors or a Thompson draw resolve).
  std::size_t local_slots = 0;
  // Until the model's first fit, a space-filling batch (a Gaussian process over a flat prior,
  // surrogate/transfer/flat_prior.h, scores every config the same then).
  bool space_filling_start = false;
};

class BatchPolicy {
 public:
  // Throws std::invalid_argument for a batch_pool of 0.
  explicit BatchPolicy(BatchPolicyOptions options = {});

  const BatchPolicyOptions& options() const { return options_; }
  // Proposals to ask the search for, for a batch of k.
  std::size_t pool(std::size_t k) const;
  // The configs in the order the tuner should take them, skipping any that `taken` says are
  // measured or already in the batch, until k are taken: `ranked` unchanged without a model's
  // belief or for the top k; else k picks as above, then the rest of `ranked`. Deterministic for
  // (seed, round, kernel) and the model's state.
  std::vector<Config> choose(CostModel* model, const Kernel& kernel, const SearchSpace& space, std::vector<Config> ranked,
                             std::size_t k, std::uint64_t seed, std::size_t round,
                             const std::function<bool(const Config&)>& taken) const;

 private:
  BatchPolicyOptions options_;
};

}  // namespace perftune
