#pragma once
// The elementwise opcodes the CPU backend executes, each defined once: as a C++ expression
// template for the code generator and as a function for the reference interpreter, so the two
// cannot drift apart silently (tests/hardware compare them op by op).
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace perftune {

struct ElementwiseOp {
  std::string_view opcode;
  int arity;
  // C++ over float operands $0, $1, $2 (generated kernels). Math goes through GCC builtins
  // (the same libm functions) so generated sources include no header: that halves compile time.
  std::string_view code;
  float (*evaluate)(const float*);  // the same formula (reference interpreter)
};

// Every supported elementwise opcode, in a fixed order.
const std::vector<ElementwiseOp>& elementwise_ops();
// nullptr if the CPU backend does not execute `opcode` elementwise.
const ElementwiseOp* find_elementwise_op(std::string_view opcode);
// `op.code` with $i replaced by args[i] (each parenthesized).
std::string instantiate(const ElementwiseOp& op, const std::vector<std::string>& args);

// A reduction body (the called computation of reduce / reduce-window): add, multiply, maximum, minimum.
// Its identity starts the accumulator when the op has no init operand; nullopt if unsupported.
std::optional<float> reducer_identity(std::string_view opcode);

}  // namespace perftune
