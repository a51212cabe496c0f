#pragma once
// Picking a batch that does not spend every measurement on one belief. A model's best-scored
// configs tend to be variants of one idea (on halide_live's conv3x3 all 8 first picks used 32
// lanes x 8 unrolled rows, each slower than the compiler's heuristic), so a round of them tests
// that idea 8 times. TVM's model-based tuner (diversity_filter_ratio) instead takes its batch from
// a wider pool of the model's best by greedy submodular coverage; this is that rule: each pick is
// the pool's config that adds the most knob values not yet in the batch, the better-ranked on ties
// (so the model's best config always comes first). Measured: `diversity_pool` in
// experiments/results/halide_live/README.md, which also lists a score-aware variant that did worse.
#include <cstddef>
#include <span>
#include <vector>

#include "ir/config.h"

namespace perftune {

// Up to n of `ranked` (best first, distinct), in pick order. Every config must have as many values
// as the first (std::invalid_argument otherwise).
std::vector<Config> diverse_pick(std::span<const Config> ranked, std::size_t n);

}  // namespace perftune
