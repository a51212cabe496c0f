#pragma once
// What each op the CPU backend supports computes, as index maps that both the reference
// interpreter and the code generator read: an output element of a reduction-like op (dot,
// convolution, reduce, reduce-window) combines terms over a reduction space, and each operand
// element it reads is an affine function of the output index and the reduction index.
// Everything is f32 and row-major (a layout attribute is ignored: it changes no value).
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "ir/program.h"

namespace perftune {

// A program the CPU backend cannot execute (unknown opcode, non-f32 type, unsupported
// attribute). The backend reports it as status invalid_config with this message.
class UnsupportedProgram : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// operand index along one dimension =
//   out_scale * (out[out_dim] / out_divisor) + red_scale * red[red_dim] + offset
// (a term is absent when its dimension is -1; the division rounds down: a grouped convolution
// reads the input features of its output feature's group).
struct AffineIndex {
  int out_dim = -1;
  std::int64_t out_scale = 1;
  int red_dim = -1;
  std::int64_t offset = 0;
  std::int64_t red_scale = 1;    // window dilation
  std::int64_t out_divisor = 1;  // output features per group

  std::int64_t at(const std::vector<std::int64_t>& out, const std::vector<std::int64_t>& red) const {
    std::int64_t i = offset;
    if (out_dim >= 0) i += out_scale * (out[static_cast<std::size_t>(out_dim)] / out_divisor);
    if (red_dim >= 0) i += red_scale * red[static_cast<std::size_t>(red_dim)];
    return i;
  }
};

struct ReductionForm {
  std::vector<std::int64_t> red_sizes;            // the reduction space, row-major
  std::vector<std::vector<AffineIndex>> operands;  // per data operand (dot, conv: 2; reduce: 1)
  std::vector<bool> bounds_checked;               // per data operand: may index out of range
  bool product = false;                           // term = operand0 * operand1, else operand0
  std::string combine;                            // binary opcode: add, maximum, ...
  float identity = 0.0f;
  int init_operand = -1;  // operand slot whose scalar value starts the accumulator (reduce)

  std::int64_t extent() const;  // product of red_sizes
};

bool is_reduction_opcode(const std::string& opcode);
// The reduction form of op `id`; throws UnsupportedProgram for an unsupported attribute.
ReductionForm reduction_form(const Program& program, OpId id);
// Index map of a structural op's single operand (broadcast, transpose, slice, and pad's first
// operand: outside it the pad reads its padding value); reshape, bitcast and copy go through the
// linear index instead, and concatenate and gather through concat_offsets and Op::indices.
// Throws UnsupportedProgram for other opcodes.
std::vector<AffineIndex> structural_index_map(const Program& program, OpId id);
bool is_affine_structural(const std::string& opcode);  // broadcast, transpose, slice, pad
// Where each operand of a concatenate starts along its dimension, and the total (n + 1 entries).
std::vector<std::int64_t> concat_offsets(const Program& program, OpId id);
bool is_linear_reshape(const std::string& opcode);  // reshape, bitcast

// Throws UnsupportedProgram naming the first op the CPU backend cannot execute.
void check_supported(const Program& program);

std::vector<std::int64_t> row_major_strides(const std::vector<std::int64_t>& dims);

}  // namespace perftune
