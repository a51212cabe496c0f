#pragma once
// AutoTVM's first batch: a model-based strategy that starts from an untrained model has nothing to
// rank by, and an untrained network's favourites are one arbitrary region of the space (in
// gpu_transfer they were slower than random picks: P(10) = -2.17 for SA + learned from scratch).
// So until the history holds `warmup` measurements it proposes uniformly random unmeasured configs,
// and the model first learns from a representative sample. (AutoTVM's ModelBasedTuner measures
// random configs until its first model update; Ansor's first round is random too.)
#include <cstddef>
#include <optional>
#include <vector>

#include "search/strategy.h"

namespace perftune {

// Up to n random unmeasured configs while context.history has fewer than `warmup` entries; nullopt
// afterwards (and always for warmup 0), when the strategy searches on its model. Deterministic for
// (context.seed, context.round); never calls the model.
std::optional<std::vector<Config>> warmup_proposals(const SearchContext& context, std::size_t n, std::size_t warmup);

}  // namespace perftune
