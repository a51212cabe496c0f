#pragma once
// The elementwise opcodes the CPU backend executes, each as the function the reference interpreter
// applies. The Halide lowering (hardware/halide/worker/lowering.cpp) writes each as a Halide expression; the
// tests check every opcode through the backend against this table.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace perftune {

struct ElementwiseOp {
  std::string_view opcode;
  int arity;
  float (*evaluate)(const float*);  // the same formula (reference interpreter)
};

// Every supported elementwise opcode, in a fixed order.
const std::vector<ElementwiseOp>& elementwise_ops();
// nullptr if the CPU backend does not execute `opcode` elementwise.
const ElementwiseOp* find_elementwise_op(std::string_view opcode);

// A reduction body (the called computation of reduce / reduce-window): add, multiply, maximum, minimum.
// Its identity starts the accumulator when the op has no init operand; nullopt if unsupported.
std::optional<float> reducer_identity(std::string_view opcode);

}  // namespace perftune
