#pragma once
// Reductions that keep their operand's rank (ONNX's keepdims), shared by the normalization, pooling
// and reduction ops.
#include <string>

#include "frontend/program_builder.h"

namespace perftune::frontend {

// `reduced` (x reduced over `axes`) reshaped back to x's rank, with 1 in each reduced dimension.
OpId keep_dims(ProgramBuilder& b, const std::string& hint, OpId reduced, const Dims& x_dims, const Dims& axes);
// The mean of x over `axes`, kept at x's rank.
OpId mean_over(ProgramBuilder& b, const std::string& hint, OpId x, const Dims& axes);

}  // namespace perftune::frontend
