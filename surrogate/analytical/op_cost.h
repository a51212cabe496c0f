#pragma once
// FLOP and byte counts per op and per kernel, untiled and unpadded (the conventions of XLA's
// HloCostAnalysis). The analytical model builds its tiled estimate on these; learned models may
// use them as node and kernel features.
//
// A kernel imported from XLA is an entry computation whose ops may be "fusion" ops calling fused
// computations (themselves possibly calling nested fusions). FlatKernel inlines every fused
// computation so that each op that does work appears once, with operands resolved through the
// nested parameters; called reducer bodies (reduce's "add") stay attached to their reduce.
#include <cstdint>
#include <string>
#include <vector>

#include "ir/kernel.h"
#include "ir/op.h"

namespace perftune {

// What unit of the device an op keeps busy.
enum class OpClass {
  kMatrix,        // dot, convolution: the matrix unit (MXU / FMA pipes)
  kVector,        // elementwise arithmetic, compare, select, convert: the vector unit
  kReduce,        // reduce, reduce-window: vector unit, one combiner per reduced element
  kDataMovement,  // copy, transpose, reshape, concatenate, slice, pad, gather, ...: bytes only
  kFree,          // parameter, constant, tuple, get-tuple-element, bitcast, broadcast, iota: no work
};
OpClass classify_op(const Op& op);

struct FlatOp {
  const Op* op = nullptr;
  std::vector<int> operands;  // indices into FlatKernel::ops
  int input = -1;             // parameter_number of the kernel input this op is, else -1
};

struct FlatKernel {
  std::vector<FlatOp> ops;   // topological: operands before users
  std::vector<int> inputs;   // flat index of each kernel parameter, by parameter_number order
  // Flat indices of the arrays the kernel writes: tuple roots expanded; inputs handed straight
  // back out (unused parameters, while-loop state tuples) are not written.
  std::vector<int> outputs;
};

// Inlines fused computations. Throws InputError if a fusion op has no called computation or a
// nested parameter number has no matching operand.
FlatKernel flatten_kernel(const Program& body);

struct OpCost {
  double flops = 0.0;          // floating-point (or integer) operations
  double bytes_read = 0.0;     // operands, as if the op ran alone
  double bytes_written = 0.0;  // its result
};

// Cost of one op given its operands' shapes (in operand order):
//   dot           2 * output elements * contraction size
//   convolution   2 * output elements * (kernel spatial elements * input features)
//   reduce        operand elements - output elements (combiner applications; HloCostAnalysis)
//   elementwise   one operation per output element
//   data movement / free: 0 flops (free ops move no bytes either)
OpCost op_cost(const Op& op, const std::vector<const Shape*>& operands);
// Contraction length of a dot (product of lhs contracting dims) or convolution (kernel spatial
// elements times input features); 1 for other ops.
std::int64_t contraction_size(const Op& op, const std::vector<const Shape*>& operands);

struct KernelCost {
  double flops = 0.0;          // all ops
  double matrix_flops = 0.0;   // dot and convolution only
  double vector_flops = 0.0;   // everything else that computes
  double bytes_read = 0.0;     // kernel inputs, each once
  double bytes_written = 0.0;  // kernel outputs, each once (fused intermediates stay on chip)
};
KernelCost kernel_cost(const FlatKernel& kernel);
KernelCost kernel_cost(const Kernel& kernel);

}  // namespace perftune
