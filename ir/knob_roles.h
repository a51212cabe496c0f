#pragma once
// The knob naming convention that backends and cost models share, so a config means the same
// thing to the CPU code generator, the analytical model and the featurizer:
//   tile.out.<d>   tile extent along dimension d of the kernel's output (its root op's shape);
//                  for TPU data, output_bounds[d] as recorded
//   tile.red       tile extent along the reduction dimension (dot contraction, reduce, conv window)
//   fuse.<e>       1 if edge e of the program (index into Program::edges()) is fused, else 0
//   vector         lanes along the innermost output dimension (the program's last), or along
//                  vector.dim where the space has it
//   vector.dim     the output dimension the lanes run along
//   unroll         rows of the next dimension unrolled around the lanes
//   parallel       0 = serial, 1 = the outermost tile loop parallel, 2 = the two outermost fused
//                  into one parallel loop
//   order          1 = the two innermost tile loops swapped (0 = row-major)
//   stages         in a whole program's fusion space (fuse.<e> knobs alone otherwise): how the
//                  stages that the placements leave at root are scheduled (hardware/halide/halide_schedule.h)
// Any other name is a generic knob (e.g. a Kernel Tuner parameter) that only learned models read;
// vector and unroll are generic knobs too, whose meaning the featurizer also reads.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ir/config.h"
#include "ir/search_space.h"

namespace perftune {

inline constexpr const char* kTileReductionKnob = "tile.red";
inline constexpr const char* kVectorKnob = "vector";
inline constexpr const char* kVectorDimKnob = "vector.dim";
inline constexpr const char* kRowsDimKnob = "rows.dim";
inline constexpr const char* kUnrollKnob = "unroll";
inline constexpr const char* kParallelKnob = "parallel";
inline constexpr const char* kOrderKnob = "order";
inline constexpr const char* kStagesKnob = "stages";
std::string tile_out_knob(std::size_t dimension);
std::string fuse_knob(std::size_t edge);

// The output dimension that the register block's unrolled rows (knob unroll) run along when the
// lanes run along `vector_dim` of a rank-`rank` output: `chosen` (knob rows.dim) where it is one,
// else (-1, or a config without the knob) the innermost other dimension (rank >= 2).
std::size_t rows_dim(std::size_t rank, std::size_t vector_dim, std::int64_t chosen = -1);

enum class KnobRole { kTileOut, kTileReduction, kFuse, kGeneric };

struct KnobInfo {
  KnobRole role = KnobRole::kGeneric;
  std::size_t index = 0;  // output dimension for kTileOut, edge id for kFuse
};

// Roles of a space's knobs, in knob order (parse once, use for every config).
std::vector<KnobInfo> knob_roles(const SearchSpace& space);
KnobInfo knob_role(const std::string& name);

// A whole program under fusion placements: every knob a fuse.<e>, or the program-wide `stages`
// (a kernel's tile space places its producers with fuse.<e> knobs too, beside its stage knobs).
bool is_fusion_space(const SearchSpace& space);

// A config read through the convention.
struct TileChoice {
  std::vector<std::int64_t> out;          // per output dimension; 0 where the space has no knob
  std::optional<std::int64_t> reduction;  // tile.red if present
  std::vector<std::size_t> fused_edges;   // edges with fuse.<e> = 1
};
TileChoice read_tiles(const std::vector<KnobInfo>& roles, const Config& config, std::size_t output_rank);

}  // namespace perftune
