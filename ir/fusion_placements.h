#pragma once
// How a kernel of a fused program is configured when the program runs under a fusion config whose
// fuse.<e> knobs say more than fused or not (the Halide backend's placements: 0 at root, 1 inlined,
// 2 per tile of the consumer; hardware/halide/fusion_space.h). The kernel's own fuse.<e'> knobs name edges
// of its body; each takes the program config's value for the same edge (same producer and consumer
// by name, same operand position), so that a cost model predicting the kernel for the fusion task,
// and the collector measuring it, see the placements the program ran with.
#include "ir/config.h"
#include "ir/kernel.h"
#include "ir/search_space.h"

namespace perftune {

// `base` (a config of `kernel_space`) with each fuse.<e'> knob whose edge `program_config` (a
// config of `program_space`) places set to that placement; `base` itself when nothing applies or
// the result is not in `kernel_space`.
Config with_program_placements(const Kernel& kernel, const SearchSpace& kernel_space, const Config& base,
                               const Program& program, const SearchSpace& program_space, const Config& program_config);

}  // namespace perftune
