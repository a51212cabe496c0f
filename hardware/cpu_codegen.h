#pragma once
// C++ code generation for the CPU backend. A kernel under a config becomes one translation unit
// exporting `extern "C" void perftune_entry(float* const* buffers)`, with the tile sizes as
// compile-time constants. Ops of a fused group are inlined at the index where their consumer
// needs them (XLA loop fusion); a reduction followed by elementwise ops accumulates into a
// static tile buffer and applies the elementwise epilogue once per element (output fusion).
// Values that leave a group (unfused edges, program outputs) go through memory buffers.
#include <cstdint>
#include <string>
#include <vector>

#include "ir/kernel.h"
#include "ir/search_space.h"

namespace perftune {

// Where the buffers of one run live: buffer b holds the value of op ops[b] of the kernel body.
// Parameters come first (in parameter order), then the checked outputs, then intermediates.
struct BufferPlan {
  std::vector<OpId> ops;
  std::vector<std::int64_t> sizes;  // elements
  std::size_t parameter_count = 0;
  std::size_t output_count = 0;
};

struct GeneratedKernel {
  std::string source;
  BufferPlan buffers;
  std::size_t loop_nests = 0;  // one per materialized value (for tests and reports)
};

// If the space has fuse.<e> knobs, the kernel's body is a program partitioned by them
// (ir/fusion.h), each fused kernel with default_tiles(); its outputs are the program's outputs.
// Otherwise the body is one fused kernel tiled by the config's tile.out.<d> / tile.red knobs;
// its outputs are the body's ops without users. Throws UnsupportedProgram (op_semantics.h) for
// an op it cannot generate, FusionError for an illegal partition.
GeneratedKernel generate_cpu_kernel(const Kernel& kernel, const SearchSpace& space, const Config& config);

}  // namespace perftune
