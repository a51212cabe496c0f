#pragma once
// Which of a kernel's output dimensions each of its inputs is indexed by: the access pattern a
// schedule's vector and unroll loops meet. A register block of `rows` unrolled rows by `lanes`
// vector lanes keeps rows x lanes accumulators live, and besides them one vector per row of an
// input indexed by both loops (an NCHW convolution's input row), one broadcast scalar per row of an
// input indexed by the unrolled loop only (a matmul's lhs element), and one shared vector of an
// input indexed by the vector loop only (a matmul's rhs row). Whether a wide block spills decides
// the schedule's speed, and the op graph alone does not say which of these an input is.
#include <cstdint>
#include <vector>

#include "ir/program.h"

namespace perftune {

// Per kernel input (parameter op, by OpId; other ops 0): a bit per output dimension of the
// kernel's root (its first tuple element for a tuple), set when the input's index varies with
// it. Dot, convolution and reduce map their dimensions (contracted and reduced ones map to no
// output dimension); broadcast and transpose permute; a rank-changing op XLA does not describe
// (reshape, gather, ...) is taken to vary with every dimension its result does. Output ranks
// above 32 fold into bit 31.
std::vector<std::uint32_t> input_output_dimensions(const Program& body);

// The three kinds of input above, counted against the root's two innermost dimensions (row-major:
// the last is the vector loop, the one before it the unrolled rows).
struct RegisterBlockInputs {
  int per_row_vector = 0;  // indexed by both
  int per_row_scalar = 0;  // by the unrolled dimension only
  int shared_vector = 0;   // by the vector dimension only
  bool operator==(const RegisterBlockInputs&) const = default;
};
RegisterBlockInputs register_block_inputs(const Program& body);

}  // namespace perftune
