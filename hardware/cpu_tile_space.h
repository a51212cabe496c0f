#pragma once
// The tile-size search space of one kernel on the CPU (knob names per ir/knob_roles.h):
// tile.out.<d> for each dimension of the kernel's root op, and tile.red for the reduction of
// the dot / convolution / reduce that the root's loop nest accumulates (the root itself, or the
// one reached from it through inlined elementwise ops: XLA's output fusion).
#include <cstdint>
#include <optional>
#include <vector>

#include "ir/kernel.h"
#include "ir/knob_roles.h"
#include "ir/search_space.h"

namespace perftune {

// The accumulator of a tiled reduction is a static array of one element per output tile point;
// 2^20 f32 (4 MiB) bounds it at about the size of this machine's L2+L3 share per core.
inline constexpr std::int64_t kMaxAccumulatorElements = std::int64_t{1} << 20;

// Powers of two below `extent`, then `extent` itself (a single tile); {1} for extent <= 1.
std::vector<std::int64_t> tile_values(std::int64_t extent);

// The reduction op whose accumulator the loop nest of `root` carries: `root` if it is a
// reduction, else the first reduction with root's dimensions reached through elementwise ops
// for which inlined[op] is true. nullopt when the nest has no accumulator.
std::optional<OpId> accumulated_reduction(const Program& program, OpId root, const std::vector<bool>& inlined);

// Tile space of the kernel's root op (body().root()); every non-output op of the body is
// inlined. A kernel whose root has rank 0 and no reduction gets a single knob tile.out.0 = {1}
// (a space needs a knob). Throws UnsupportedProgram (op_semantics.h) for a reduction it cannot read.
SearchSpace cpu_tile_space(const Kernel& kernel);

// A sensible tile choice for a kernel measured inside a fused program (no tuning): a 16-row by
// 128-column output block and 128-deep reduction steps, chosen on this machine's 1024^3 matmul
// sweep (bench/cpu_matmul_bench.cpp) as a config within 2x of the best, clamped to the extents.
TileChoice default_tiles(const Program& program, OpId root, std::optional<std::int64_t> reduction_extent);
// default_tiles() of the kernel's root as a config of `space` (cpu_tile_space(kernel)): each knob
// takes the largest value of its domain not above the default.
Config default_tile_config(const Kernel& kernel, const SearchSpace& space);

}  // namespace perftune
