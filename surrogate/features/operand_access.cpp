#include "surrogate/features/operand_access.h"

#include <algorithm>

namespace perftune {

namespace {

constexpr int kNoOutputDim = -1;    // contracted or reduced: the index moves with an inner loop
constexpr int kEveryOutputDim = -2;  // a mapping XLA's attributes do not give

const Shape& array_shape(const Shape& shape) {
  return shape.element_type == ElementType::kTuple && !shape.tuple_shapes.empty() ? array_shape(shape.tuple_shapes.front())
                                                                                : shape;
}

std::uint32_t dimension_bit(std::size_t d) { return 1u << std::min<std::size_t>(d, 31); }

bool contains(const std::vector<std::int64_t>& values, std::size_t value) {
  return std::find(values.begin(), values.end(), static_cast<std::int64_t>(value)) != values.end();
}

// For each dimension of operand `k` (of rank `operand_rank`), the dimension of `op`'s result its
// index follows.
std::vector<int> operand_dimension_sources(const Op& op, std::size_t k, std::size_t operand_rank, std::size_t result_rank) {
  std::vector<int> sources(operand_rank, kEveryOutputDim);
  if (operand_rank == 0) return sources;
  if (op.dot && k < 2) {
    const DotDims& dims = *op.dot;
    const auto& batch = k == 0 ? dims.lhs_batch : dims.rhs_batch;
    const auto& contracting = k == 0 ? dims.lhs_contracting : dims.rhs_contracting;
    // Result dimensions: batch, then lhs free, then rhs free, each in operand order.
    std::size_t next = batch.size();
    if (k == 1) {  // the lhs's free dimensions come first: the result's rank less the rhs's free ones
      const std::size_t rhs_free = operand_rank - std::min(operand_rank, batch.size() + contracting.size());
      next = result_rank - std::min(result_rank, rhs_free);
    }
    for (std::size_t d = 0; d < operand_rank; ++d) {
      const auto b = std::find(batch.begin(), batch.end(), static_cast<std::int64_t>(d));
      if (b != batch.end()) sources[d] = static_cast<int>(b - batch.begin());
      else if (contains(contracting, d)) sources[d] = kNoOutputDim;
      else sources[d] = static_cast<int>(next++);
    }
    return sources;
  }
  if (op.convolution && k < 2) {
    const ConvolutionDims& dims = *op.convolution;
    std::fill(sources.begin(), sources.end(), kNoOutputDim);
    const auto set = [&](std::int64_t operand_dim, std::int64_t result_dim) {
      if (operand_dim >= 0 && static_cast<std::size_t>(operand_dim) < operand_rank) sources[operand_dim] = static_cast<int>(result_dim);
    };
    if (k == 0) {
      set(dims.input_batch, dims.output_batch);
      for (std::size_t s = 0; s < dims.input_spatial.size() && s < dims.output_spatial.size(); ++s)
        set(dims.input_spatial[s], dims.output_spatial[s]);
    } else {
      set(dims.kernel_output_feature, dims.output_feature);
    }
    return sources;
  }
  if (op.opcode == "reduce" && operand_rank == result_rank + op.dimensions.size()) {
    std::size_t next = 0;
    for (std::size_t d = 0; d < operand_rank; ++d) sources[d] = contains(op.dimensions, d) ? kNoOutputDim : static_cast<int>(next++);
    return sources;
  }
  if (op.opcode == "broadcast" && op.dimensions.size() == operand_rank) {
    for (std::size_t d = 0; d < operand_rank; ++d) sources[d] = static_cast<int>(op.dimensions[d]);
    return sources;
  }
  if (op.opcode == "transpose" && op.dimensions.size() == operand_rank) {
    for (std::size_t d = 0; d < operand_rank; ++d)
      if (op.dimensions[d] >= 0 && static_cast<std::size_t>(op.dimensions[d]) < operand_rank)
        sources[static_cast<std::size_t>(op.dimensions[d])] = static_cast<int>(d);
    return sources;
  }
  if (op.opcode != "reshape" && op.opcode != "bitcast" && operand_rank == result_rank)
    for (std::size_t d = 0; d < operand_rank; ++d) sources[d] = static_cast<int>(d);  // elementwise, pad, slice, window
  return sources;
}

}  // namespace

std::vector<std::uint32_t> input_output_dimensions(const Program& body) {
  std::vector<std::uint32_t> inputs(body.size(), 0);
  if (body.empty()) return inputs;
  // Per op, per dimension of its result: the root dimensions that dimension's index varies with.
  std::vector<std::vector<std::uint32_t>> masks(body.size());
  for (OpId id = 0; id < body.size(); ++id) masks[id].assign(array_shape(body.op(id).shape).dims.size(), 0);
  OpId root = body.root();
  if (body.op(root).opcode == "tuple" && !body.operands(root).empty()) root = body.operands(root).front();
  for (std::size_t d = 0; d < masks[root].size(); ++d) masks[root][d] = dimension_bit(d);
  const std::vector<OpId> order = body.topological_order();
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const Op& op = body.op(*it);
    const std::vector<std::uint32_t>& result = masks[*it];
    std::uint32_t any = 0;
    for (std::uint32_t m : result) any |= m;
    if (any == 0) continue;
    const std::vector<OpId> operands = body.operands(*it);
    for (std::size_t k = 0; k < operands.size(); ++k) {
      std::vector<std::uint32_t>& operand = masks[operands[k]];
      const std::vector<int> sources = operand_dimension_sources(op, k, operand.size(), result.size());
      for (std::size_t d = 0; d < operand.size(); ++d) {
        if (sources[d] == kEveryOutputDim) operand[d] |= any;
        else if (sources[d] >= 0 && static_cast<std::size_t>(sources[d]) < result.size()) operand[d] |= result[sources[d]];
      }
    }
  }
  for (OpId id = 0; id < body.size(); ++id)
    if (body.op(id).is_parameter())
      for (std::uint32_t m : masks[id]) inputs[id] |= m;
  return inputs;
}

RegisterBlockInputs register_block_inputs(const Program& body) {
  RegisterBlockInputs counts;
  if (body.empty()) return counts;
  OpId root = body.root();
  if (body.op(root).opcode == "tuple" && !body.operands(root).empty()) root = body.operands(root).front();
  const std::size_t rank = array_shape(body.op(root).shape).dims.size();
  if (rank == 0) return counts;
  const std::uint32_t vector_bit = dimension_bit(rank - 1);
  const std::uint32_t row_bit = rank >= 2 ? dimension_bit(rank - 2) : 0;
  const std::vector<std::uint32_t> inputs = input_output_dimensions(body);
  for (OpId id = 0; id < body.size(); ++id) {
    if (!body.op(id).is_parameter()) continue;
    const bool by_vector = inputs[id] & vector_bit, by_row = row_bit != 0 && (inputs[id] & row_bit);
    counts.per_row_vector += by_vector && by_row;
    counts.per_row_scalar += by_row && !by_vector;
    counts.shared_vector += by_vector && !by_row;
  }
  return counts;
}

}  // namespace perftune
