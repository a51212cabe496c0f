#pragma once
// What a config means as a Halide schedule, without Halide: the live CPU backend's schedule
// spaces and their interpretation. The tuner process builds spaces and reads configs through this
// file only; the Halide runner child (hardware/halide/worker/halide_runner.cpp) turns a HalideSchedule into real
// Halide scheduling calls (halide/apply_schedule.h).
//
// Knobs (names per ir/knob_roles.h where a role exists):
//   tile.out.<d>  tile extent along output dimension d of the kernel's root stage
//   tile.red      split of the accumulated reduction's first reduction dimension (dot contraction,
//                 convolution input feature, reduced dimension)
//   vector        vector width along the lanes' output dimension (1 = scalar)
//   vector.dim    the output dimension the lanes run along: the innermost, or one along which the
//                 accumulated reduction reads a panel operand that its other operands read
//                 broadcast (vector_dims(): a convolution's output channels, whose OIHW weights
//                 pack to OIHWo, or a GEMM's rows). Present only when there is such a dimension.
//   reduction.order  0 = the accumulated reduction's first dimension (contraction, input feature)
//                 outside its others (a convolution's window inside each input channel), 1 =
//                 inside them (oneDNN's order: the window outside, the channels innermost, so
//                 successive steps read no input element twice and the register block's
//                 broadcasts stay few). Present only with two or more reduction dimensions of more
//                 than one point.
//   unroll        unroll factor of the register block's rows (along rows.dim) inside a tile
//   rows.dim      the output dimension the register block's rows run along: -1 = the innermost
//                 other than the lanes' (rows_dim(), ir/knob_roles.h; also what a config without
//                 the knob means), else that dimension, never the lanes'. A pointwise convolution
//                 to few channels runs its lanes along the width and its rows along the output
//                 channels: one input vector then feeds every row's accumulator (a GEMM's
//                 micro-kernel with the weights broadcast), where rows along the height read
//                 every input row again for each channel. Present where vector.dim is, at rank 3 or more.
//                 The analytical model reads the row count (unroll), not which dimension it runs along.
//   parallel      0 = serial, 1 = the outermost tile loop is parallel, 2 = the two outermost tile
//                 loops fused into one parallel loop
//   order         0 = tile loops in the output's row-major order, 1 = the two innermost tile loops
//                 swapped (walks a 2-D output column-block first)
//   fuse.<e>      where the producer of edge e is computed for this consumer: 0 = at root (its own
//                 loop nest, the value stored: unfused), 1 = inlined into the consumer (a
//                 reduction, which cannot be inlined: at the consumer's innermost register block),
//                 2 = at a tile of the consumer group's root stage
//   pack          1 = the reduction's panel operand along the lanes (panel_operand(): a GEMM's B
//                 under lanes along its columns, a convolution's weights under lanes along its
//                 output channels) is copied once, at root, into panels of `vector` lanes that the
//                 register block reads contiguously (GotoBLAS's packed B, oneDNN's OIHWo
//                 weights); 0 = read in place. Present only when the accumulated reduction has a
//                 panel operand; 1 only with a tile of whole vectors along the lanes.
//   pad           where the padded input of a windowed reduction (a convolution or pooling whose
//                 window reaches past its input) is computed, with the values of fuse.<e>: 0 = a
//                 padded copy at root, 1 = inlined (a bounds check on every load), 2 = per tile of
//                 the stage whose loops hold the reduction. Present only in kernels with padding.
//   stages        in a whole program's fusion space, where no stage has knobs of its own:
//                 1 = every stage at root is scheduled as heuristic_config() schedules a kernel
//                 (heuristic_stage(), the reduction of its group whole inside the register block,
//                 its panel operand packed where the lanes tile it in whole vectors and it is read
//                 at root, the column tiles then outside the row tiles); absent (records from
//                 before the knob) = heuristic_stage() alone.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ir/kernel.h"
#include "ir/search_space.h"

namespace perftune {

enum class Placement { kRoot = 0, kInline = 1, kTile = 2 };

// How one stage computed at root is scheduled.
struct StageSchedule {
  std::vector<std::int64_t> tiles;  // per output dimension, program (row-major) order
  std::int64_t reduction_tile = 0;  // 0 = no split
  int reduction_order = 0;          // knob reduction.order
  int vector = 1;
  int vector_dim = -1;  // the program dimension the lanes run along; -1 = the innermost
  int rows_dim = -1;    // the program dimension the unrolled rows run along; -1 = rows_dim()'s default
  int unroll = 1;
  int parallel = 0;
  int order = 0;
  // A reduction stage: kRoot = its own loops are tiled in place; kInline = a wrapper stage is
  // tiled and the reduction accumulates per register block (vector x unroll) inside it; kTile =
  // per tile of the wrapper.
  Placement accumulator = Placement::kRoot;
};

// The whole schedule of a kernel: every op that is not a parameter has a placement; each op at
// root has a stage schedule; an op inlined or at a tile is computed inside `group_root[op]`
// (kSeveralGroups: an inlined op read inside several stages).
inline constexpr OpId kSeveralGroups = static_cast<OpId>(-1);
// A packed panel operand: `lanes` per panel, along output dimension `dim` of the reduction.
struct Panels {
  int lanes = 1;
  std::size_t dim = 0;
  bool operator==(const Panels&) const = default;
};
struct HalideSchedule {
  std::vector<Placement> placement;       // by OpId (parameters: kRoot, unused)
  std::vector<OpId> group_root;           // by OpId: the root-stage op whose loops hold it
  std::map<OpId, StageSchedule> stages;   // ops at root
  Placement padding = Placement::kInline;  // every padded reduction input (knob `pad`)
  std::map<OpId, Panels> panels;           // reductions whose panel operand is packed
};

// The operand of a reduction that its register block reads along vector lanes that run along
// output dimension `lanes` (default: the innermost): one indexed, in its dimension `dim`, by that
// output dimension alone (unscaled, unshifted), and by the reduction elsewhere, with no padding (a
// GEMM's B under lanes along columns, whose rows the lanes walk; a convolution's OIHW weights under
// lanes along output channels). `slot` is its place in reduction_form()'s operands. None for other
// reductions (a convolution's lanes along W read its input at a stride and a window offset).
struct PanelOperand {
  std::size_t slot = 0;
  std::size_t dim = 0;
};
std::optional<PanelOperand> panel_operand(const Program& body, OpId reduction, std::optional<std::size_t> lanes = std::nullopt);

// The output dimensions of the kernel's root that its lanes may run along (knob vector.dim), in
// ascending order: the innermost, and each other of two or more points along which the
// accumulated reduction has a panel operand while its other operands do not read that dimension
// (each lane's FMA then takes one packed vector and one broadcast scalar). Empty for a rank-0 root.
std::vector<std::int64_t> vector_dims(const Program& body);

// The output dimension a stage's lanes run along: its vector_dim, or the innermost (0 at rank 0).
std::size_t lanes_dim(const StageSchedule& stage, std::size_t rank);

// The outputs a kernel computes: Program::outputs() without unused parameters (an input nothing
// reads is not a result). The lowering returns these, and the backend checks these.
std::vector<OpId> computed_outputs(const Program& body);

// The value a config without knob `name` means, for the knobs added after corpora were recorded
// without them (rows.dim -1, pack 0, reduction.order 0); none for the others.
std::optional<std::int64_t> absent_knob_value(const std::string& name);

// `space` without the knobs that `knob_names` lacks, each held at absent_knob_value(): the space
// a log recorded before those knobs existed has, so collecting into it again plans what it
// planned then and writes records its kernel definition still fits. `space` itself when nothing is
// missing. Throws std::invalid_argument when `knob_names` has a knob `space` lacks, or lacks one
// with no absent value.
SearchSpace space_within_knobs(const SearchSpace& space, const std::vector<std::string>& knob_names);

// Which knob names a config may carry; anything else is rejected by schedule_from_knobs.
bool is_halide_schedule_knob(const std::string& name);

// The schedule a named config means for `body` (any subset of the knobs above; a missing fuse.<e>
// is 0, missing stage knobs take the unscheduled values). Placements deeper than a consumer
// allows are raised to the consumer's level (a producer cannot live inside a loop its consumer
// is outside of). Throws std::invalid_argument naming an unknown knob or a value out of range.
HalideSchedule schedule_from_knobs(const Program& body, const std::map<std::string, std::int64_t>& knobs);

// The tile-and-schedule space of one kernel (the tile task): stage knobs of its root and a fuse.<e>
// knob per edge from a computed op, constrained to vector <= the innermost tile, unroll <= the
// second-innermost tile, legal (acyclic) groupings. Throws UnsupportedProgram (op_semantics.h)
// for an op the backend cannot lower.
SearchSpace halide_schedule_space(const Kernel& kernel);

// The config of `space` that is Halide's unscheduled pipeline: every stage at root, untiled,
// scalar, serial.
Config unscheduled_config(const SearchSpace& space, const Kernel& kernel);

// A schedule a programmer would write first for stage `id` of `body` (used for the groups of a
// whole program under fusion decisions, which has no stage knobs): a library-style micro-kernel of
// 8 rows by 32 lanes on an AVX-512 host (6 by 16 on AVX2 or where 32 lanes do not tile the columns
// whole), in tiles of 32 (24) rows by 256 columns (or narrower), whole along the other dimensions
// but the outermost (1, so the parallel outer tile loop has iterations), the reduction
// whole inside the register block. A convolution whose output channels are a vector_dims() entry
// runs its lanes along them (oneDNN's direct convolution): tiles of one channel block (32 channels
// by up to 8 rows on an AVX-512 host where 32 divide the channels, else 16 by up to 6), its rows
// along the output's width. A GEMM's tile is its register block (rows in a power-of-two tile), its
// column tiles outside its row tiles, and at rank 2 with enough column tiles they alone are the
// parallel loop. A plain reduction of its operand's innermost dimension (a global pool
// over an NCHW image, a softmax's or a LayerNorm's row sums) has one scalar accumulator per output
// instead (vector 1, one row), reading along its reduction: lanes along the output would gather.
// A kernel without reductions has no unrolled rows (nothing accumulates), and runs on one thread
// when its output is small (under 2^15 elements, halide_schedule.cpp).
StageSchedule heuristic_stage(const Program& body, OpId id);
// Whether the heuristic packs the kernel's panel operand: whenever it has one along the
// heuristic's lanes, where that tile is whole vectors (heuristic_config reads it in place
// otherwise), but not under the scalar accumulators of a reduction of its innermost dimension. Packed,
// its column tiles run outside its row tiles (order 1).
bool heuristic_packs(const Program& body);

// heuristic_stage() of the kernel's root as a config of `space` (halide_schedule_space(kernel)),
// producers inlined (reductions per register block), padded inputs per tile: how a kernel is scheduled inside a program
// under fusion decisions, for models that score such a program kernel by kernel.
Config heuristic_config(const SearchSpace& space, const Kernel& kernel);

// The config as a name -> value map (the form the runner protocol carries).
std::map<std::string, std::int64_t> named_knobs(const SearchSpace& space, const Config& config);

}  // namespace perftune
