#include "hardware/reference/reference_interpreter.h"

#include <algorithm>
#include <stdexcept>

#include "hardware/reference/elementwise_ops.h"
#include "hardware/reference/input_data.h"
#include "hardware/reference/op_semantics.h"

namespace perftune {

namespace {

// Multi-index of a row-major linear index.
void unravel(std::int64_t linear, const std::vector<std::int64_t>& dims, std::vector<std::int64_t>& index) {
  index.resize(dims.size());
  for (std::size_t d = dims.size(); d-- > 0;) {
    index[d] = dims[d] ? linear % dims[d] : 0;
    linear = dims[d] ? linear / dims[d] : 0;
  }
}

double combine(const ElementwiseOp& op, double a, double b) {
  const float args[2] = {static_cast<float>(a), static_cast<float>(b)};
  if (op.opcode == "add") return a + b;  // keep the double accumulator exact-ish
  if (op.opcode == "multiply") return a * b;
  return op.evaluate(args);
}

std::vector<float> reduce_op(const Program& program, OpId id, const std::vector<std::vector<float>>& values) {
  const Op& op = program.op(id);
  const ReductionForm form = reduction_form(program, id);
  const auto operands = program.operands(id);
  const ElementwiseOp& combiner = *find_elementwise_op(form.combine);
  std::vector<float> out(static_cast<std::size_t>(op.shape.element_count()));
  std::vector<std::int64_t> out_index, red_index;
  const std::int64_t extent = form.extent();
  const std::size_t data_operands = form.operands.size();
  std::vector<std::vector<std::int64_t>> strides;
  for (std::size_t k = 0; k < data_operands; ++k) strides.push_back(row_major_strides(program.op(operands[k]).shape.dims));
  // Per operand: the stride that one step of each reduction dimension moves by (for operands
  // read without bounds checks, the offset is then base + sum of red_index * red_stride).
  std::vector<std::vector<std::int64_t>> red_strides(data_operands, std::vector<std::int64_t>(form.red_sizes.size(), 0));
  for (std::size_t k = 0; k < data_operands; ++k)
    for (std::size_t d = 0; d < form.operands[k].size(); ++d)
      if (form.operands[k][d].red_dim >= 0) red_strides[k][form.operands[k][d].red_dim] += strides[k][d] * form.operands[k][d].red_scale;
  const bool simple = form.red_sizes.size() == 1 &&
                      std::none_of(form.bounds_checked.begin(), form.bounds_checked.end(), [](bool b) { return b; });
  for (std::size_t o = 0; o < out.size(); ++o) {
    unravel(static_cast<std::int64_t>(o), op.shape.dims, out_index);
    double acc = form.init_operand >= 0 ? values[operands[form.init_operand]][0] : form.identity;
    if (simple) {  // one reduction dimension, no padding: the common dot and reduce
      std::int64_t base[2] = {0, 0};
      for (std::size_t k = 0; k < data_operands; ++k)
        for (std::size_t d = 0; d < form.operands[k].size(); ++d) {
          const AffineIndex& a = form.operands[k][d];
          if (a.out_dim >= 0) base[k] += (a.out_scale * (out_index[a.out_dim] / a.out_divisor) + a.offset) * strides[k][d];
        }
      const float* x = values[operands[0]].data() + base[0];
      const std::int64_t sx = red_strides[0][0];
      if (form.product) {
        const float* y = values[operands[1]].data() + base[1];
        const std::int64_t sy = red_strides[1][0];
        for (std::int64_t r = 0; r < extent; ++r) acc += static_cast<double>(x[r * sx]) * y[r * sy];
      } else {
        for (std::int64_t r = 0; r < extent; ++r) acc = combine(combiner, acc, x[r * sx]);
      }
      out[o] = static_cast<float>(acc);
      continue;
    }
    for (std::int64_t r = 0; r < extent; ++r) {
      unravel(r, form.red_sizes, red_index);
      double term = 1.0;
      for (std::size_t k = 0; k < data_operands; ++k) {
        const std::vector<std::int64_t>& dims = program.op(operands[k]).shape.dims;
        std::int64_t offset = 0;
        bool inside = true;
        for (std::size_t d = 0; d < dims.size(); ++d) {
          const std::int64_t i = form.operands[k][d].at(out_index, red_index);
          inside = inside && i >= 0 && i < dims[d];
          offset += i * strides[k][d];
        }
        // Padding reads zero in a convolution and the init value in a reduce-window.
        const double padding = form.product ? 0.0 : (form.init_operand >= 0 ? values[operands[form.init_operand]][0] : form.identity);
        const double v = inside ? values[operands[k]][static_cast<std::size_t>(offset)] : padding;
        term = form.product ? term * v : v;
      }
      acc = combine(combiner, acc, term);
    }
    out[o] = static_cast<float>(acc);
  }
  return out;
}

}  // namespace

std::vector<OpId> ordered_parameters(const Program& program) {
  std::vector<OpId> ids;
  for (OpId id = 0; id < program.size(); ++id)
    if (program.op(id).is_parameter()) ids.push_back(id);
  std::stable_sort(ids.begin(), ids.end(), [&](OpId a, OpId b) {
    return program.op(a).parameter_number < program.op(b).parameter_number;
  });
  return ids;
}

std::vector<std::vector<float>> parameter_values(const Program& program, const std::vector<std::vector<float>>& activations) {
  std::vector<std::vector<float>> values;
  std::size_t next = 0;
  for (OpId id : ordered_parameters(program)) {
    const Op& op = program.op(id);
    if (op.weight && op.literal) {
      values.push_back(*op.literal);
    } else if (op.weight) {
      throw std::invalid_argument("parameter_values: weight '" + op.name + "' has no values");
    } else {
      if (next >= activations.size()) throw std::invalid_argument("parameter_values: too few inputs (" + std::to_string(activations.size()) + ")");
      values.push_back(activations[next++]);
    }
  }
  if (next != activations.size()) throw std::invalid_argument("parameter_values: " + std::to_string(activations.size()) + " inputs for " + std::to_string(next) + " activations");
  return values;
}

std::vector<std::vector<float>> make_inputs(const Program& program, std::uint64_t seed) {
  std::vector<std::vector<float>> inputs;
  for (OpId id : ordered_parameters(program)) {
    const std::size_t count = static_cast<std::size_t>(program.op(id).shape.element_count());
    std::vector<float> values(count);
    for (std::size_t i = 0; i < count; ++i) values[i] = input_value(seed, inputs.size(), i, count);
    inputs.push_back(std::move(values));
  }
  return inputs;
}

std::vector<std::vector<float>> interpret(const Program& program, const std::vector<std::vector<float>>& parameters) {
  check_supported(program);
  std::vector<std::vector<float>> values(program.size());
  const std::vector<OpId> params = ordered_parameters(program);
  if (params.size() != parameters.size())
    throw std::invalid_argument("interpret: " + std::to_string(parameters.size()) + " inputs for " +
                                std::to_string(params.size()) + " parameters");
  for (std::size_t p = 0; p < params.size(); ++p) {
    if (static_cast<std::int64_t>(parameters[p].size()) != program.op(params[p]).shape.element_count())
      throw std::invalid_argument("interpret: input " + std::to_string(p) + " has the wrong size");
    values[params[p]] = parameters[p];
  }
  std::vector<std::int64_t> index, operand_index;
  for (OpId id : program.topological_order()) {
    const Op& op = program.op(id);
    if (op.is_parameter()) continue;
    const auto operands = program.operands(id);
    const std::size_t count = static_cast<std::size_t>(op.shape.element_count());
    std::vector<float> out(count);
    if (const ElementwiseOp* e = find_elementwise_op(op.opcode)) {
      float args[3];
      for (std::size_t i = 0; i < count; ++i) {
        for (std::size_t k = 0; k < operands.size(); ++k) args[k] = values[operands[k]][i];
        out[i] = e->evaluate(args);
      }
    } else if (is_reduction_opcode(op.opcode)) {
      out = reduce_op(program, id, values);
    } else if (is_linear_reshape(op.opcode)) {
      out = values[operands[0]];
    } else if (op.is_constant()) {
      out = *op.literal;
    } else if (op.opcode == "concatenate") {
      const auto offsets = concat_offsets(program, id);
      const std::size_t axis = static_cast<std::size_t>(op.dimensions[0]);
      for (std::size_t i = 0; i < count; ++i) {
        unravel(static_cast<std::int64_t>(i), op.shape.dims, index);
        std::size_t k = 0;
        while (index[axis] >= offsets[k + 1]) ++k;
        index[axis] -= offsets[k];
        const auto& dims = program.op(operands[k]).shape.dims;
        const auto strides = row_major_strides(dims);
        std::int64_t offset = 0;
        for (std::size_t d = 0; d < dims.size(); ++d) offset += index[d] * strides[d];
        out[i] = values[operands[k]][static_cast<std::size_t>(offset)];
      }
    } else if (op.opcode == "gather") {
      const auto& input_dims = program.op(operands[0]).shape.dims;
      const auto strides = row_major_strides(input_dims);
      const std::size_t axis = static_cast<std::size_t>(op.dimensions[0]);
      const std::size_t index_rank = op.shape.dims.size() + 1 - input_dims.size();
      const std::vector<std::int64_t> index_dims(op.shape.dims.begin() + static_cast<std::ptrdiff_t>(axis),
                                                 op.shape.dims.begin() + static_cast<std::ptrdiff_t>(axis + index_rank));
      const auto index_strides = row_major_strides(index_dims);
      for (std::size_t i = 0; i < count; ++i) {
        unravel(static_cast<std::int64_t>(i), op.shape.dims, index);
        std::int64_t flat = 0;
        for (std::size_t k = 0; k < index_rank; ++k) flat += index[axis + k] * index_strides[k];
        std::int64_t offset = op.indices[static_cast<std::size_t>(flat)] * strides[axis];
        for (std::size_t d = 0; d < axis; ++d) offset += index[d] * strides[d];
        for (std::size_t d = axis + 1; d < input_dims.size(); ++d) offset += index[d + index_rank - 1] * strides[d];
        out[i] = values[operands[0]][static_cast<std::size_t>(offset)];
      }
    } else {
      const std::vector<AffineIndex> map = structural_index_map(program, id);
      const auto& input_dims = program.op(operands[0]).shape.dims;
      const auto strides = row_major_strides(input_dims);
      const float outside = op.opcode == "pad" ? values[operands[1]][0] : 0.0f;
      for (std::size_t i = 0; i < count; ++i) {
        unravel(static_cast<std::int64_t>(i), op.shape.dims, index);
        std::int64_t offset = 0;
        bool inside = true;
        for (std::size_t d = 0; d < map.size(); ++d) {
          const std::int64_t at = map[d].at(index, {});
          inside = inside && at >= 0 && at < input_dims[d];
          offset += at * strides[d];
        }
        out[i] = inside ? values[operands[0]][static_cast<std::size_t>(offset)] : outside;
      }
    }
    values[id] = std::move(out);
  }
  return values;
}

}  // namespace perftune
