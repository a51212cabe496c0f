#pragma once
// The hybrid feature block (schema kFeatureSchemaVersion >= 2): the analytical model's roofline
// estimate of a config, as config features for the learned model, so that the GNN learns a
// correction to the roofline instead of the whole cost (GnnParams::analytical_feature). Applies to
// tile-convention knobs (TPU data, the CPU corpus); for generic knobs the analytical model gives
// one constant per kernel and the block carries no information.
//
// Per config, kAnalyticalFeatureWidth floats:
//   present, ln(predicted seconds), infeasible flag, ln(roofline seconds), ln(compute s),
//   ln(memory s), ln(overhead s), log2(working set / on-chip bytes), log2(padded / useful FLOPs)
// Column kAnalyticalLogSeconds is exactly what AnalyticalModel::predict returns, the scratchpad
// penalty included, and the learned model adds it to its output (a residual), so an untrained
// hybrid ranks as the analytical model does. The roofline column is the time a tile the model
// judges too large would take if it fitted (for the head: every measured config did run).
#include <cstddef>
#include <span>

#include "ir/config.h"
#include "ir/kernel.h"
#include "ir/search_space.h"
#include "surrogate/analytical/analytical_model.h"

namespace perftune {

inline constexpr std::size_t kAnalyticalFeatureWidth = 9;
inline constexpr std::size_t kAnalyticalLogSeconds = 1;  // column of ln(predicted seconds) in the block

// Writes configs.size() x kAnalyticalFeatureWidth floats into `out` (row-major); out.size() must
// match (std::invalid_argument otherwise).
void analytical_features(const AnalyticalModel& model, const Kernel& kernel, const SearchSpace& space,
                         std::span<const Config> configs, std::span<float> out);

}  // namespace perftune
