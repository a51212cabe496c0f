#pragma once
// A kernel of perftune's program IR as a Halide pipeline definition: one Func per op (elementwise,
// broadcast, transpose, slice, pad, concatenate, gather and reshape as pure definitions; a constant
// as a literal or an embedded buffer; dot, convolution, reduce and reduce-window as an initial value
// plus an update over an RDom, from op_semantics.h's reduction forms), one ImageParam per parameter. Dimensions are reversed: Halide's first dimension is the innermost,
// the program's last dimension (row-major), so buffers are shared without copies.
// Nothing is scheduled here (halide/apply_schedule.h does that).
#include <Halide.h>

#include <map>
#include <vector>

#include "hardware/halide/halide_schedule.h"
#include "ir/program.h"

namespace perftune::halide {

struct LoweredKernel {
  std::vector<Halide::Func> funcs;                 // by OpId; undefined for parameters
  std::vector<Halide::ImageParam> inputs;          // in Kernel::parameters() order
  std::vector<OpId> input_ops;                     // the parameter op of each input
  std::map<OpId, std::vector<Halide::RVar>> rvars;  // reduction ops: one RVar per reduction dimension, program order
  std::vector<OpId> outputs;                       // computed_outputs()
  // Reduction ops whose window reaches into padding: the padded operand (a boundary condition
  // Func, inlined unless the schedule places it: HalideSchedule::padding).
  std::map<OpId, std::vector<Halide::Func>> padded;
  // Reductions that read their panel operand (halide_schedule.h's panel_operand) through a packed
  // copy: P(lane, the operand's other dimensions, innermost first, panel), computed where the
  // schedule puts it. Its first argument is the lane, its last the panel.
  std::map<OpId, Halide::Func> panels;
};

// `panels`: reductions whose panel operand is read through a packed copy, the lanes per panel and
// the output dimension they run along (HalideSchedule::panels). Throws UnsupportedProgram (op_semantics.h) naming the first op
// it cannot lower.
LoweredKernel lower(const Program& body, const std::map<OpId, Panels>& panels = {});

// The Halide variable of program dimension `d` of a rank-`rank` op (shared by every Func).
Halide::Var dimension_var(std::size_t rank, std::size_t d);

// Estimates of every input and output from the program's shapes (the autoschedulers need them).
void set_shape_estimates(LoweredKernel& lowered, const Program& body, const std::vector<Halide::Func>& outputs);

}  // namespace perftune::halide
