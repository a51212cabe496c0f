#pragma once
// What a multi-op kernel's producer placements cost (the Halide schedule space's fuse.<e> knobs:
// 0 at root, 1 inlined, 2 per tile of the consumer). An inlined producer is evaluated again at
// every read by its consumers: a reduction inlined into a broadcast recomputes the whole reduction
// for each element, an operand of a dot inlined is recomputed for each of the other side's columns.
// A producer at root writes its whole result to memory and its consumers read it back.
#include <vector>

#include "ir/config.h"
#include "ir/knob_roles.h"
#include "ir/program.h"

namespace perftune {

struct PlacementWork {
  double recompute = 1.0;   // flops under these placements over the flops with each op computed once
  double root_bytes = 0.0;  // bytes of intermediates stored at root, written and read back
};

// `roles` are knob_roles() of the kernel's space; a fuse knob's index is its edge in body.edges().
PlacementWork placement_work(const Program& body, const std::vector<KnobInfo>& roles, const Config& config);

}  // namespace perftune
