#pragma once
// The loop-nest statistics of hardware/halide/loop_nest_features.h, read from a lowered Halide module.
#include <Halide.h>

#include <array>

#include "hardware/halide/loop_nest_features.h"

namespace perftune::halide {

// Walks the module's entry function `entry`, following each parallel loop into the closure
// function it became, with every statement weighted by its executions: the product of the
// constant upper bounds of the enclosing loops' extents (a loop with none counts once).
std::array<float, kLoopNestFeatureCount> loop_nest_stats(const Halide::Module& module, const std::string& entry);

}  // namespace perftune::halide
