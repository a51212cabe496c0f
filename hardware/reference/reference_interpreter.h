#pragma once
// A straightforward interpreter over a Program: the reference that every generated CPU kernel
// is checked against. One op at a time, row-major f32 buffers, reductions accumulated in double
// (so it is at least as accurate as any kernel it checks). Slow on purpose: it has no tiling.
#include <cstdint>
#include <vector>

#include "ir/program.h"

namespace perftune {

// Values of every op of `program`, indexed by OpId, given one buffer per parameter in
// Kernel::parameters() order (by parameter_number). Throws UnsupportedProgram (op_semantics.h)
// for an op the CPU backend does not execute, std::invalid_argument for a wrong input size.
std::vector<std::vector<float>> interpret(const Program& program, const std::vector<std::vector<float>>& parameters);

// The inputs a CPU measurement runs on (input_data.h), one buffer per parameter, in order.
std::vector<std::vector<float>> make_inputs(const Program& program, std::uint64_t seed);

// One buffer per parameter (ordered_parameters order): `activations` for the parameters that are
// not weights, in order, and each weight's own values (Op::literal). Throws std::invalid_argument
// for a count that does not match or a weight without values.
std::vector<std::vector<float>> parameter_values(const Program& program, const std::vector<std::vector<float>>& activations);

// Parameters ordered by parameter_number (ties by id), as Kernel::parameters() orders them.
std::vector<OpId> ordered_parameters(const Program& program);

}  // namespace perftune
