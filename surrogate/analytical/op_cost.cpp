#include "surrogate/analytical/op_cost.h"

#include <algorithm>
#include <set>

#include "ir/fusion.h"
#include "ir/input_error.h"

namespace perftune {

namespace {

bool is_free_opcode(const std::string& opcode) {
  static const std::set<std::string> kFree = {"parameter", "constant", "tuple", "get-tuple-element",
                                              "bitcast", "broadcast", "iota", "after-all", "partition-id",
                                              "replica-id"};
  return kFree.count(opcode) > 0;
}

// Inlines `program` into `flat`. `bindings[n]` is the flat index feeding parameter n of a fused
// computation; empty for the kernel's own body, whose parameters become kernel inputs.
// Returns the flat index of each op of `program` (-1 for ops that produce nothing: none today).
std::vector<int> inline_program(const Program& program, const std::vector<int>& bindings, FlatKernel& flat,
                                const std::string& where) {
  std::vector<int> index(program.size(), -1);
  for (OpId id : program.topological_order(where)) {
    const Op& op = program.op(id);
    std::vector<int> operands;
    for (OpId operand : program.operands(id)) operands.push_back(index[operand]);
    if (op.is_parameter()) {
      if (!bindings.empty()) {
        if (op.parameter_number < 0 || op.parameter_number >= static_cast<std::int64_t>(bindings.size()))
          throw InputError(where, "op " + op.name,
                           "a parameter_number below the fusion's operand count " + std::to_string(bindings.size()));
        index[id] = bindings[static_cast<std::size_t>(op.parameter_number)];
        continue;
      }
      flat.ops.push_back(FlatOp{&op, {}, static_cast<int>(op.parameter_number)});
      index[id] = static_cast<int>(flat.ops.size()) - 1;
      continue;
    }
    if (op.opcode == "fusion") {
      if (op.called.empty() || !op.called.front())
        throw InputError(where, "op " + op.name, "a fusion op with its fused computation attached");
      const Program& fused = *op.called.front();
      const std::vector<int> inner = inline_program(fused, operands, flat, where);
      index[id] = inner[fused.root()];
      continue;
    }
    flat.ops.push_back(FlatOp{&op, std::move(operands), -1});
    index[id] = static_cast<int>(flat.ops.size()) - 1;
  }
  return index;
}

void expand_output(const FlatKernel& flat, int index, std::vector<int>& outputs) {
  const FlatOp& node = flat.ops[static_cast<std::size_t>(index)];
  if (node.op->opcode == "tuple") {
    for (int operand : node.operands) expand_output(flat, operand, outputs);
    return;
  }
  if (node.input >= 0) return;  // an input handed straight back out is not written again
  if (std::find(outputs.begin(), outputs.end(), index) == outputs.end()) outputs.push_back(index);
}

}  // namespace

OpClass classify_op(const Op& op) {
  if (op.opcode == "dot" || op.opcode == "convolution") return OpClass::kMatrix;
  if (op.opcode == "reduce" || op.opcode == "reduce-window") return OpClass::kReduce;
  if (is_free_opcode(op.opcode)) return OpClass::kFree;
  if (is_elementwise_opcode(op.opcode) || op.opcode == "rng") return OpClass::kVector;
  return OpClass::kDataMovement;
}

FlatKernel flatten_kernel(const Program& body) {
  FlatKernel flat;
  const std::vector<int> index = inline_program(body, {}, flat, body.name());
  std::vector<std::pair<std::int64_t, int>> inputs;
  for (std::size_t i = 0; i < flat.ops.size(); ++i)
    if (flat.ops[i].input >= 0) inputs.emplace_back(flat.ops[i].input, static_cast<int>(i));
  std::sort(inputs.begin(), inputs.end());
  for (const auto& [number, i] : inputs) flat.inputs.push_back(i);
  for (OpId id : body.outputs()) {
    expand_output(flat, index[id], flat.outputs);
  }
  return flat;
}

std::int64_t contraction_size(const Op& op, const std::vector<const Shape*>& operands) {
  if (op.opcode == "dot" && op.dot && !operands.empty()) {
    std::int64_t k = 1;
    for (std::int64_t d : op.dot->lhs_contracting)
      if (d >= 0 && d < static_cast<std::int64_t>(operands[0]->dims.size())) k *= operands[0]->dims[d];
    return k;
  }
  if (op.opcode == "convolution" && operands.size() >= 2) {
    const Shape& kernel = *operands[1];
    const ConvolutionDims dims = op.convolution.value_or(ConvolutionDims{});
    const std::int64_t out_feature_dim = dims.kernel_output_feature;
    // Every kernel dimension except the output features is contracted (spatial x input features).
    std::int64_t k = 1;
    for (std::size_t d = 0; d < kernel.dims.size(); ++d)
      if (static_cast<std::int64_t>(d) != out_feature_dim) k *= kernel.dims[d];
    return k;
  }
  return 1;
}

OpCost op_cost(const Op& op, const std::vector<const Shape*>& operands) {
  OpCost cost;
  const OpClass kind = classify_op(op);
  if (kind == OpClass::kFree) return cost;
  for (const Shape* shape : operands) cost.bytes_read += static_cast<double>(shape->byte_size());
  cost.bytes_written = static_cast<double>(op.shape.byte_size());
  const double out = static_cast<double>(op.shape.element_count());
  switch (kind) {
    case OpClass::kMatrix: cost.flops = 2.0 * out * static_cast<double>(contraction_size(op, operands)); break;
    case OpClass::kReduce: {
      // Variadic reduces carry N operands and N inits; the first half are the reduced arrays.
      const std::size_t arrays = std::max<std::size_t>(1, operands.size() / 2);
      double in = 0.0;
      for (std::size_t i = 0; i < arrays && i < operands.size(); ++i)
        in += static_cast<double>(operands[i]->element_count());
      cost.flops = std::max(0.0, in - out);
      break;
    }
    case OpClass::kVector: cost.flops = out; break;
    default: break;
  }
  return cost;
}

KernelCost kernel_cost(const FlatKernel& kernel) {
  KernelCost total;
  for (const FlatOp& node : kernel.ops) {
    std::vector<const Shape*> operands;
    for (int operand : node.operands) operands.push_back(&kernel.ops[static_cast<std::size_t>(operand)].op->shape);
    const OpCost cost = op_cost(*node.op, operands);
    total.flops += cost.flops;
    if (classify_op(*node.op) == OpClass::kMatrix) total.matrix_flops += cost.flops;
    else total.vector_flops += cost.flops;
  }
  for (int input : kernel.inputs) total.bytes_read += static_cast<double>(kernel.ops[static_cast<std::size_t>(input)].op->shape.byte_size());
  for (int output : kernel.outputs) total.bytes_written += static_cast<double>(kernel.ops[static_cast<std::size_t>(output)].op->shape.byte_size());
  return total;
}

KernelCost kernel_cost(const Kernel& kernel) { return kernel_cost(flatten_kernel(kernel.body())); }

}  // namespace perftune
