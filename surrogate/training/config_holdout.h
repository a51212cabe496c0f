#pragma once
// The config holdout: with no kernels set aside for early stopping, each training kernel gives a
// seeded share of its configs to validation and trains on the rest.
#include <cstddef>
#include <optional>
#include <vector>

#include "ir/random.h"

namespace perftune {

// Kernels with fewer configs than this are too small to spare any.
inline constexpr std::size_t kMinConfigsForHoldout = 5;

// Moves `fraction` of `configs` (indices, at least one) out of it and returns them, or nothing
// when fewer than kMinConfigsForHoldout are drawable. `kept` (a config every training group holds,
// TrainOptions::tiling_in_groups) is never drawn and stays in `configs`, last.
std::vector<std::size_t> draw_config_holdout(std::vector<std::size_t>& configs, double fraction,
                                             std::optional<std::size_t> kept, Rng& rng);

}  // namespace perftune
