#include "hardware/reference/op_semantics.h"

#include <algorithm>
#include <numeric>
#include <set>

#include "hardware/reference/elementwise_ops.h"

namespace perftune {

namespace {

[[noreturn]] void unsupported(const Op& op, const std::string& what) {
  throw UnsupportedProgram("op '" + op.name + "' (" + op.opcode + "): " + what +
                           " is not supported by the CPU code generator");
}

const Op& operand(const Program& program, OpId id, std::size_t slot) {
  const auto operands = program.operands(id);
  if (slot >= operands.size()) unsupported(program.op(id), "a missing operand " + std::to_string(slot));
  return program.op(operands[slot]);
}

std::string reducer_of(const Op& op) {
  if (op.called.empty()) return "add";  // no body recorded: a sum (the common case in our programs)
  const Program& body = *op.called.front();
  const std::string opcode = body.op(body.root()).opcode;
  if (!reducer_identity(opcode)) unsupported(op, "reduction body '" + opcode + "'");
  return opcode;
}

void expect_dims(const Op& op, const std::vector<std::int64_t>& dims) {
  if (op.shape.dims != dims) unsupported(op, "an output shape that does not follow from its operands");
}

void check_unit(const Op& op, const std::vector<std::int64_t>& values, const char* what) {
  for (std::int64_t v : values)
    if (v != 1) unsupported(op, std::string(what) + " other than 1");
}

ReductionForm dot_form(const Program& program, OpId id) {
  const Op& op = program.op(id);
  if (!op.dot) unsupported(op, "a dot without dot dimension numbers");
  const DotDims& d = *op.dot;
  const Op& lhs = operand(program, id, 0);
  const Op& rhs = operand(program, id, 1);
  if (d.lhs_contracting.size() != d.rhs_contracting.size() || d.lhs_batch.size() != d.rhs_batch.size())
    unsupported(op, "unpaired contracting or batch dimensions");
  ReductionForm form;
  form.product = true;
  form.combine = "add";
  form.operands.assign(2, {});
  form.operands[0].resize(lhs.shape.dims.size());
  form.operands[1].resize(rhs.shape.dims.size());
  form.bounds_checked = {false, false};
  std::vector<std::int64_t> out_dims;
  const auto rank_ok = [&](const Op& side, std::int64_t dim) {
    if (dim < 0 || dim >= static_cast<std::int64_t>(side.shape.dims.size())) unsupported(op, "a dimension number out of range");
    return static_cast<std::size_t>(dim);
  };
  for (std::size_t b = 0; b < d.lhs_batch.size(); ++b) {
    const auto l = rank_ok(lhs, d.lhs_batch[b]), r = rank_ok(rhs, d.rhs_batch[b]);
    form.operands[0][l].out_dim = form.operands[1][r].out_dim = static_cast<int>(out_dims.size());
    out_dims.push_back(lhs.shape.dims[l]);
  }
  for (std::size_t c = 0; c < d.lhs_contracting.size(); ++c) {
    const auto l = rank_ok(lhs, d.lhs_contracting[c]), r = rank_ok(rhs, d.rhs_contracting[c]);
    if (lhs.shape.dims[l] != rhs.shape.dims[r]) unsupported(op, "contracting dimensions of different sizes");
    form.operands[0][l].red_dim = form.operands[1][r].red_dim = static_cast<int>(c);
    form.red_sizes.push_back(lhs.shape.dims[l]);
  }
  for (int side = 0; side < 2; ++side) {
    const Op& o = side == 0 ? lhs : rhs;
    for (std::size_t k = 0; k < o.shape.dims.size(); ++k) {
      AffineIndex& a = form.operands[side][k];
      if (a.out_dim >= 0 || a.red_dim >= 0) continue;
      a.out_dim = static_cast<int>(out_dims.size());
      out_dims.push_back(o.shape.dims[k]);
    }
  }
  expect_dims(op, out_dims);
  return form;
}

ReductionForm convolution_form(const Program& program, OpId id) {
  const Op& op = program.op(id);
  if (!op.convolution) unsupported(op, "a convolution without dimension numbers");
  const ConvolutionDims& c = *op.convolution;
  const Op& lhs = operand(program, id, 0);
  const Op& rhs = operand(program, id, 1);
  const std::size_t spatial = c.input_spatial.size();
  if (c.kernel_spatial.size() != spatial || c.output_spatial.size() != spatial ||
      lhs.shape.dims.size() != spatial + 2 || rhs.shape.dims.size() != spatial + 2 || op.shape.dims.size() != spatial + 2)
    unsupported(op, "inconsistent convolution dimension numbers");
  Window window;
  if (op.window) window = *op.window;
  const auto at = [](const std::vector<std::int64_t>& v, std::size_t i, std::int64_t fallback) {
    return i < v.size() ? v[i] : fallback;
  };
  check_unit(op, window.base_dilation, "base dilation");
  const std::int64_t groups = c.feature_group_count;
  if (groups < 1 || lhs.shape.dims[c.input_feature] != rhs.shape.dims[c.kernel_input_feature] * groups ||
      rhs.shape.dims[c.kernel_output_feature] % groups != 0)
    unsupported(op, "input features that are not the kernel's times the feature groups");
  ReductionForm form;
  form.product = true;
  form.combine = "add";
  form.operands.assign(2, {});
  form.operands[0].resize(spatial + 2);
  form.operands[1].resize(spatial + 2);
  form.bounds_checked = {false, false};  // set below if a window reaches into the padding
  std::vector<std::int64_t> out_dims(spatial + 2, 0);
  form.red_sizes.push_back(rhs.shape.dims[c.kernel_input_feature]);
  form.operands[0][c.input_batch].out_dim = static_cast<int>(c.output_batch);
  form.operands[0][c.input_feature].red_dim = 0;
  if (groups > 1) {  // group g = output feature / (outputs per group) reads input features g * (kernel inputs) + r
    AffineIndex& feature = form.operands[0][c.input_feature];
    feature.out_dim = static_cast<int>(c.output_feature);
    feature.out_divisor = rhs.shape.dims[c.kernel_output_feature] / groups;
    feature.out_scale = rhs.shape.dims[c.kernel_input_feature];
  }
  form.operands[1][c.kernel_input_feature].red_dim = 0;
  form.operands[1][c.kernel_output_feature].out_dim = static_cast<int>(c.output_feature);
  out_dims[c.output_batch] = lhs.shape.dims[c.input_batch];
  out_dims[c.output_feature] = rhs.shape.dims[c.kernel_output_feature];
  for (std::size_t s = 0; s < spatial; ++s) {
    const std::int64_t size = rhs.shape.dims[c.kernel_spatial[s]];
    const std::int64_t stride = at(window.stride, s, 1), pad_low = at(window.pad_low, s, 0), pad_high = at(window.pad_high, s, 0);
    const std::int64_t dilation = at(window.window_dilation, s, 1);
    if (stride <= 0 || dilation <= 0) unsupported(op, "a non-positive stride or dilation");
    if (!window.size.empty() && at(window.size, s, size) != size) unsupported(op, "a window size that differs from the kernel");
    const int red = static_cast<int>(form.red_sizes.size());
    form.red_sizes.push_back(size);
    form.operands[0][c.input_spatial[s]] = {static_cast<int>(c.output_spatial[s]), stride, red, -pad_low, dilation};
    if (pad_low != 0 || pad_high != 0) form.bounds_checked[0] = true;
    form.operands[1][c.kernel_spatial[s]].red_dim = red;
    const std::int64_t padded = lhs.shape.dims[c.input_spatial[s]] + pad_low + pad_high;
    const std::int64_t reach = (size - 1) * dilation + 1;
    out_dims[c.output_spatial[s]] = padded < reach ? 0 : (padded - reach) / stride + 1;
  }
  expect_dims(op, out_dims);
  return form;
}

// The part reduce and reduce-window share: one input, an optional scalar init, a body.
ReductionForm reducer_form(const Program& program, OpId id) {
  const Op& op = program.op(id);
  const auto operands = program.operands(id);
  if (operands.empty() || operands.size() > 2) unsupported(op, "other than one input and one init value");
  ReductionForm form;
  form.combine = reducer_of(op);
  form.identity = *reducer_identity(form.combine);
  if (operands.size() == 2) {
    if (program.op(operands[1]).shape.element_count() != 1) unsupported(op, "a non-scalar init value");
    form.init_operand = 1;
  }
  return form;
}

ReductionForm reduce_form(const Program& program, OpId id) {
  const Op& op = program.op(id);
  const Op& input = program.op(program.operands(id)[0]);
  ReductionForm form = reducer_form(program, id);
  form.operands.assign(1, std::vector<AffineIndex>(input.shape.dims.size()));
  form.bounds_checked = {false};
  std::set<std::int64_t> reduced;
  for (std::int64_t d : op.dimensions) {
    if (d < 0 || d >= static_cast<std::int64_t>(input.shape.dims.size()) || !reduced.insert(d).second)
      unsupported(op, "reduce dimensions that are out of range or repeated");
    form.operands[0][d].red_dim = static_cast<int>(form.red_sizes.size());
    form.red_sizes.push_back(input.shape.dims[d]);
  }
  std::vector<std::int64_t> out_dims;
  for (std::size_t d = 0; d < input.shape.dims.size(); ++d) {
    if (reduced.count(static_cast<std::int64_t>(d))) continue;
    form.operands[0][d].out_dim = static_cast<int>(out_dims.size());
    out_dims.push_back(input.shape.dims[d]);
  }
  expect_dims(op, out_dims);
  return form;
}

ReductionForm reduce_window_form(const Program& program, OpId id) {
  const Op& op = program.op(id);
  ReductionForm form = reducer_form(program, id);
  if (!op.window) unsupported(op, "a reduce-window without a window");
  const Op& input = program.op(program.operands(id)[0]);
  const Window& w = *op.window;
  const std::size_t rank = input.shape.dims.size();
  if (w.size.size() != rank) unsupported(op, "a window whose rank differs from its input");
  check_unit(op, w.base_dilation, "base dilation");
  form.operands.assign(1, std::vector<AffineIndex>(rank));
  form.bounds_checked = {false};  // set below if a window reaches into the padding
  std::vector<std::int64_t> out_dims;
  for (std::size_t d = 0; d < rank; ++d) {
    const std::int64_t stride = d < w.stride.size() ? w.stride[d] : 1;
    const std::int64_t pad_low = d < w.pad_low.size() ? w.pad_low[d] : 0;
    const std::int64_t pad_high = d < w.pad_high.size() ? w.pad_high[d] : 0;
    const std::int64_t dilation = d < w.window_dilation.size() ? w.window_dilation[d] : 1;
    if (stride <= 0 || dilation <= 0) unsupported(op, "a non-positive window stride or dilation");
    form.operands[0][d] = {static_cast<int>(d), stride, static_cast<int>(d), -pad_low, dilation};
    if (pad_low != 0 || pad_high != 0) form.bounds_checked[0] = true;
    form.red_sizes.push_back(w.size[d]);
    const std::int64_t padded = input.shape.dims[d] + pad_low + pad_high;
    const std::int64_t reach = (w.size[d] - 1) * dilation + 1;
    out_dims.push_back(padded < reach ? 0 : (padded - reach) / stride + 1);
  }
  expect_dims(op, out_dims);
  return form;
}

}  // namespace

std::int64_t ReductionForm::extent() const {
  return std::accumulate(red_sizes.begin(), red_sizes.end(), std::int64_t{1}, std::multiplies<>());
}

bool is_reduction_opcode(const std::string& opcode) {
  return opcode == "dot" || opcode == "convolution" || opcode == "reduce" || opcode == "reduce-window";
}

bool is_linear_reshape(const std::string& opcode) { return opcode == "reshape" || opcode == "bitcast"; }

ReductionForm reduction_form(const Program& program, OpId id) {
  const std::string& opcode = program.op(id).opcode;
  if (opcode == "dot") return dot_form(program, id);
  if (opcode == "convolution") return convolution_form(program, id);
  if (opcode == "reduce") return reduce_form(program, id);
  if (opcode == "reduce-window") return reduce_window_form(program, id);
  unsupported(program.op(id), "a reduction of this kind");
}

bool is_affine_structural(const std::string& opcode) {
  return opcode == "broadcast" || opcode == "transpose" || opcode == "slice" || opcode == "pad";
}

std::vector<std::int64_t> concat_offsets(const Program& program, OpId id) {
  const Op& op = program.op(id);
  const std::size_t rank = op.shape.dims.size();
  if (op.dimensions.size() != 1 || op.dimensions[0] < 0 || op.dimensions[0] >= static_cast<std::int64_t>(rank))
    unsupported(op, "a concatenate without one dimension in range");
  const std::size_t axis = static_cast<std::size_t>(op.dimensions[0]);
  std::vector<std::int64_t> offsets{0};
  for (OpId o : program.operands(id)) {
    const auto& dims = program.op(o).shape.dims;
    for (std::size_t d = 0; d < rank; ++d)
      if (dims.size() != rank || (d != axis && dims[d] != op.shape.dims[d])) unsupported(op, "operands whose other dimensions differ");
    offsets.push_back(offsets.back() + dims[axis]);
  }
  if (offsets.size() < 2 || offsets.back() != op.shape.dims[axis]) unsupported(op, "an output that is not its operands' total");
  return offsets;
}

namespace {

void check_gather(const Program& program, OpId id) {
  const Op& op = program.op(id);
  const Op& input = operand(program, id, 0);
  const std::int64_t rank = static_cast<std::int64_t>(input.shape.dims.size());
  if (op.dimensions.size() != 1 || op.dimensions[0] < 0 || op.dimensions[0] >= rank) unsupported(op, "a gather without one dimension in range");
  const std::size_t axis = static_cast<std::size_t>(op.dimensions[0]);
  const std::int64_t index_rank = static_cast<std::int64_t>(op.shape.dims.size()) - rank + 1;
  if (index_rank < 0) unsupported(op, "an output of too low a rank");
  std::int64_t count = 1;
  for (std::int64_t k = 0; k < index_rank; ++k) count *= op.shape.dims[axis + static_cast<std::size_t>(k)];
  if (count != static_cast<std::int64_t>(op.indices.size())) unsupported(op, "indices that do not match its output shape");
  for (std::int64_t i : op.indices)
    if (i < 0 || i >= input.shape.dims[axis]) unsupported(op, "an index out of range");
  for (std::size_t d = 0; d < axis; ++d)
    if (op.shape.dims[d] != input.shape.dims[d]) unsupported(op, "an output shape that does not follow from its operand");
  for (std::size_t d = axis + 1; d < input.shape.dims.size(); ++d)
    if (op.shape.dims[d + static_cast<std::size_t>(index_rank) - 1] != input.shape.dims[d])
      unsupported(op, "an output shape that does not follow from its operand");
}

}  // namespace

std::vector<AffineIndex> structural_index_map(const Program& program, OpId id) {
  const Op& op = program.op(id);
  const Op& input = operand(program, id, 0);
  const std::size_t rank = input.shape.dims.size();
  std::vector<AffineIndex> map(rank);
  if (op.opcode == "slice" || op.opcode == "pad") {
    if (op.shape.dims.size() != rank) unsupported(op, "a rank that differs from its operand's");
    for (std::size_t d = 0; d < rank; ++d) {
      map[d].out_dim = static_cast<int>(d);
      if (op.opcode == "slice") {
        if (!op.slice || op.slice->start.size() != rank || op.slice->stride.size() != rank) unsupported(op, "a slice without one start and stride per dimension");
        map[d].out_scale = op.slice->stride[d];
        map[d].offset = op.slice->start[d];
        const std::int64_t n = op.shape.dims[d];
        const std::int64_t last = op.slice->start[d] + (n - 1) * op.slice->stride[d];
        if (n > 0 && (op.slice->start[d] < 0 || op.slice->start[d] >= input.shape.dims[d] || last < 0 || last >= input.shape.dims[d]))
          unsupported(op, "a slice that reads outside its operand");
      } else {
        if (!op.padding || op.padding->low.size() != rank || op.padding->high.size() != rank) unsupported(op, "a pad without low and high padding per dimension");
        map[d].offset = -op.padding->low[d];
        if (op.shape.dims[d] != input.shape.dims[d] + op.padding->low[d] + op.padding->high[d]) unsupported(op, "a padded shape that does not match");
      }
    }
    return map;
  }
  if (op.dimensions.size() != rank) unsupported(op, "'dimensions' with one entry per operand dimension missing");
  for (std::size_t i = 0; i < rank; ++i) {
    const std::int64_t d = op.dimensions[i];
    if (d < 0 || d >= static_cast<std::int64_t>(op.shape.dims.size())) unsupported(op, "a dimension out of range");
    if (op.opcode == "broadcast") {
      // A kept dimension of size 1 may stretch (numpy's rule; XLA reshapes it away first).
      if (input.shape.dims[i] != op.shape.dims[d] && input.shape.dims[i] != 1) unsupported(op, "a broadcast that changes a kept dimension");
      map[i].out_dim = input.shape.dims[i] == op.shape.dims[d] ? static_cast<int>(d) : -1;
    } else if (op.opcode == "transpose") {
      // Output dimension i is operand dimension dimensions[i].
      if (input.shape.dims[d] != op.shape.dims[i]) unsupported(op, "a transpose whose shape does not match");
      map[d].out_dim = static_cast<int>(i);
    } else {
      unsupported(op, "a structural op of this kind");
    }
  }
  return map;
}

void check_supported(const Program& program) {
  for (OpId id = 0; id < program.size(); ++id) {
    const Op& op = program.op(id);
    if (op.shape.element_type != ElementType::kF32)
      unsupported(op, "element type " + std::string(element_type_name(op.shape.element_type)) + " (f32 only)");
    if (op.is_parameter()) continue;
    const auto operands = program.operands(id);
    if (op.is_constant() && !operands.empty()) unsupported(op, "a constant with operands");
    if (const ElementwiseOp* e = find_elementwise_op(op.opcode)) {
      if (static_cast<int>(operands.size()) != e->arity)
        unsupported(op, std::to_string(operands.size()) + " operands (expected " + std::to_string(e->arity) + ")");
      for (OpId o : operands)
        if (program.op(o).shape.dims != op.shape.dims) unsupported(op, "operands of another shape (broadcast them first)");
    } else if (is_reduction_opcode(op.opcode)) {
      (void)reduction_form(program, id);
    } else if (op.opcode == "broadcast" || op.opcode == "transpose" || op.opcode == "slice") {
      if (operands.size() != 1) unsupported(op, "other than one operand");
      (void)structural_index_map(program, id);
    } else if (op.opcode == "pad") {
      if (operands.size() != 2 || program.op(operands[1]).shape.element_count() != 1) unsupported(op, "other than a tensor and a scalar padding value");
      (void)structural_index_map(program, id);
    } else if (op.opcode == "concatenate") {
      (void)concat_offsets(program, id);
    } else if (op.opcode == "gather") {
      if (operands.size() != 1) unsupported(op, "other than one operand (its indices are constant)");
      check_gather(program, id);
    } else if (op.is_constant()) {
      if (!op.literal || static_cast<std::int64_t>(op.literal->size()) != op.shape.element_count()) unsupported(op, "a constant without one value per element");
    } else if (is_linear_reshape(op.opcode)) {
      if (operands.size() != 1 || program.op(operands[0]).shape.element_count() != op.shape.element_count())
        unsupported(op, "a reshape that changes the element count");
    } else {
      unsupported(op, "opcode '" + op.opcode + "'");
    }
  }
}

std::vector<std::int64_t> row_major_strides(const std::vector<std::int64_t>& dims) {
  std::vector<std::int64_t> strides(dims.size(), 1);
  for (std::size_t d = dims.size(); d-- > 1;) strides[d - 1] = strides[d] * dims[d];
  return strides;
}

}  // namespace perftune
