#include "frontend/program_builder.h"

#include <algorithm>
#include <numeric>
#include <set>
#include <stdexcept>

namespace perftune::frontend {

namespace {

std::string dims_text(const Dims& dims) {
  std::string out = "[";
  for (std::size_t i = 0; i < dims.size(); ++i) out += (i ? "," : "") + std::to_string(dims[i]);
  return out + "]";
}

[[noreturn]] void bad(const std::string& what) { throw std::invalid_argument(what); }

std::size_t checked_axis(std::int64_t axis, std::size_t rank) {
  if (axis < 0 || axis >= static_cast<std::int64_t>(rank)) bad("axis " + std::to_string(axis) + " out of range for rank " + std::to_string(rank));
  return static_cast<std::size_t>(axis);
}

}  // namespace

std::int64_t element_count(const Dims& dims) {
  return std::accumulate(dims.begin(), dims.end(), std::int64_t{1}, std::multiplies<>());
}

std::string ProgramBuilder::unique_name(const std::string& hint) {
  std::string base = hint.empty() ? "op" : hint;
  std::string name = base;
  for (int k = 1; names_.count(name); ++k) name = base + "." + std::to_string(k);
  names_.insert(name);
  return name;
}

OpId ProgramBuilder::add(const std::string& hint, Op op, const std::vector<OpId>& operands) {
  for (std::int64_t d : op.shape.dims)
    if (const auto problem = dimension_problem(d)) bad("a dimension " + std::to_string(d) + ": expected " + *problem);
  if (const auto problem = shape_problem(op.shape)) bad("shape " + dims_text(op.shape.dims) + ": expected " + *problem);
  op.name = unique_name(hint);
  return program_.add_op(std::move(op), operands);
}

OpId ProgramBuilder::parameter(const std::string& hint, const Dims& dims, bool weight, std::shared_ptr<const Literal> values) {
  Op op;
  op.opcode = "parameter";
  op.shape.dims = dims;
  op.parameter_number = parameters_++;
  op.weight = weight;
  op.literal = std::move(values);
  return add(hint, std::move(op), {});
}

OpId ProgramBuilder::constant(const std::string& hint, const Dims& dims, std::shared_ptr<const Literal> values) {
  if (!values || static_cast<std::int64_t>(values->size()) != element_count(dims))
    bad("a constant of shape " + dims_text(dims) + " needs one value per element");
  Op op;
  op.opcode = "constant";
  op.shape.dims = dims;
  op.literal = std::move(values);
  return add(hint, std::move(op), {});
}

OpId ProgramBuilder::elementwise(const std::string& hint, const std::string& opcode, const std::vector<OpId>& operands) {
  for (OpId o : operands)
    if (dims(o) != dims(operands.front())) bad(opcode + " of shapes " + dims_text(dims(operands.front())) + " and " + dims_text(dims(o)));
  Op op;
  op.opcode = opcode;
  op.shape.dims = dims(operands.front());
  return add(hint, std::move(op), operands);
}

Dims ProgramBuilder::broadcast_shape(const Dims& a, const Dims& b) const {
  const std::size_t rank = std::max(a.size(), b.size());
  Dims out(rank);
  for (std::size_t i = 0; i < rank; ++i) {
    const std::int64_t x = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    const std::int64_t y = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (x != y && x != 1 && y != 1) bad("shapes " + dims_text(a) + " and " + dims_text(b) + " that do not broadcast");
    out[i] = x == 1 ? y : x;
  }
  return out;
}

OpId ProgramBuilder::broadcast_to(const std::string& hint, OpId x, const Dims& target) {
  const Dims from = dims(x);
  if (from == target) return x;
  if (from.size() > target.size()) bad("a broadcast of " + dims_text(from) + " to the lower rank of " + dims_text(target));
  const std::size_t lead = target.size() - from.size();
  Dims mapped;
  for (std::size_t i = 0; i < from.size(); ++i) {
    if (from[i] != target[lead + i] && from[i] != 1) bad("a broadcast of " + dims_text(from) + " to " + dims_text(target));
    mapped.push_back(static_cast<std::int64_t>(lead + i));
  }
  Op op;
  op.opcode = "broadcast";
  op.shape.dims = target;
  op.dimensions = mapped;
  return add(hint, std::move(op), {x});
}

OpId ProgramBuilder::binary(const std::string& hint, const std::string& opcode, OpId a, OpId b) {
  const Dims out = broadcast_shape(dims(a), dims(b));
  return elementwise(hint, opcode, {broadcast_to(hint, a, out), broadcast_to(hint, b, out)});
}

OpId ProgramBuilder::with_scalar(const std::string& hint, const std::string& opcode, OpId x, float value, bool scalar_first) {
  const OpId s = broadcast_to(hint, scalar(hint + ".c", value), dims(x));
  return elementwise(hint, opcode, scalar_first ? std::vector<OpId>{s, x} : std::vector<OpId>{x, s});
}

OpId ProgramBuilder::reshape(const std::string& hint, OpId x, const Dims& target) {
  if (dims(x) == target) return x;
  if (element_count(dims(x)) != element_count(target)) bad("a reshape of " + dims_text(dims(x)) + " to " + dims_text(target));
  Op op;
  op.opcode = "reshape";
  op.shape.dims = target;
  return add(hint, std::move(op), {x});
}

OpId ProgramBuilder::transpose(const std::string& hint, OpId x, const Dims& permutation) {
  const Dims& from = dims(x);
  if (permutation.size() != from.size()) bad("a permutation of " + std::to_string(permutation.size()) + " entries for rank " + std::to_string(from.size()));
  std::set<std::int64_t> seen;
  Dims out;
  for (std::int64_t p : permutation) {
    if (!seen.insert(p).second) bad("a permutation with a repeated entry");
    out.push_back(from[checked_axis(p, from.size())]);
  }
  bool identity = true;
  for (std::size_t i = 0; i < permutation.size(); ++i) identity = identity && permutation[i] == static_cast<std::int64_t>(i);
  if (identity) return x;
  Op op;
  op.opcode = "transpose";
  op.shape.dims = out;
  op.dimensions = permutation;
  return add(hint, std::move(op), {x});
}

std::shared_ptr<const Program> ProgramBuilder::reducer_body(const std::string& combine) {
  for (const auto& [name, body] : bodies_)
    if (name == combine) return body;
  auto body = std::make_shared<Program>(combine + "_body");
  Op a, b, root;
  a.name = "a";
  b.name = "b";
  a.opcode = b.opcode = "parameter";
  a.parameter_number = 0;
  b.parameter_number = 1;
  root.name = "r";
  root.opcode = combine;
  const OpId ia = body->add_op(a), ib = body->add_op(b);
  body->set_root(body->add_op(root, {ia, ib}));
  bodies_.emplace_back(combine, body);
  return body;
}

OpId ProgramBuilder::reduce(const std::string& hint, OpId x, const Dims& axes, const std::string& combine) {
  const Dims& from = dims(x);
  std::set<std::int64_t> reduced;
  for (std::int64_t a : axes)
    if (!reduced.insert(static_cast<std::int64_t>(checked_axis(a, from.size()))).second) bad("a reduction axis given twice");
  if (reduced.empty()) return x;
  Op op;
  op.opcode = "reduce";
  for (std::size_t d = 0; d < from.size(); ++d)
    if (!reduced.count(static_cast<std::int64_t>(d))) op.shape.dims.push_back(from[d]);
  op.dimensions.assign(reduced.begin(), reduced.end());
  if (combine != "add") op.called.push_back(reducer_body(combine));
  return add(hint, std::move(op), {x});
}

OpId ProgramBuilder::dot(const std::string& hint, OpId lhs, OpId rhs, const DotDims& d) {
  const Dims &l = dims(lhs), &r = dims(rhs);
  if (d.lhs_contracting.size() != d.rhs_contracting.size() || d.lhs_batch.size() != d.rhs_batch.size()) bad("unpaired dot dimensions");
  std::set<std::int64_t> lhs_used, rhs_used;
  Dims out;
  for (std::size_t b = 0; b < d.lhs_batch.size(); ++b) {
    const std::size_t i = checked_axis(d.lhs_batch[b], l.size()), j = checked_axis(d.rhs_batch[b], r.size());
    if (l[i] != r[j]) bad("batch dimensions of sizes " + std::to_string(l[i]) + " and " + std::to_string(r[j]));
    out.push_back(l[i]);
    lhs_used.insert(d.lhs_batch[b]);
    rhs_used.insert(d.rhs_batch[b]);
  }
  for (std::size_t c = 0; c < d.lhs_contracting.size(); ++c) {
    const std::size_t i = checked_axis(d.lhs_contracting[c], l.size()), j = checked_axis(d.rhs_contracting[c], r.size());
    if (l[i] != r[j]) bad("contracting dimensions of sizes " + std::to_string(l[i]) + " and " + std::to_string(r[j]));
    lhs_used.insert(d.lhs_contracting[c]);
    rhs_used.insert(d.rhs_contracting[c]);
  }
  for (std::size_t i = 0; i < l.size(); ++i)
    if (!lhs_used.count(static_cast<std::int64_t>(i))) out.push_back(l[i]);
  for (std::size_t j = 0; j < r.size(); ++j)
    if (!rhs_used.count(static_cast<std::int64_t>(j))) out.push_back(r[j]);
  Op op;
  op.opcode = "dot";
  op.shape.dims = out;
  op.dot = d;
  return add(hint, std::move(op), {lhs, rhs});
}

OpId ProgramBuilder::convolution(const std::string& hint, OpId input, OpId kernel, const ConvolutionDims& c, const Window& w) {
  const Dims &in = dims(input), &k = dims(kernel);
  const std::size_t spatial = c.input_spatial.size();
  if (in.size() != spatial + 2 || k.size() != spatial + 2) bad("a convolution of ranks " + std::to_string(in.size()) + " and " + std::to_string(k.size()));
  const std::int64_t groups = c.feature_group_count;
  if (groups < 1 || in[c.input_feature] != k[c.kernel_input_feature] * groups || k[c.kernel_output_feature] % groups != 0)
    bad("input features " + std::to_string(in[c.input_feature]) + " that are not the kernel's " + std::to_string(k[c.kernel_input_feature]) +
        " times " + std::to_string(groups) + " groups, or output features not divisible by the groups");
  Dims out(spatial + 2);
  out[c.output_batch] = in[c.input_batch];
  out[c.output_feature] = k[c.kernel_output_feature];
  for (std::size_t s = 0; s < spatial; ++s) {
    const std::int64_t reach = (k[c.kernel_spatial[s]] - 1) * w.window_dilation[s] + 1;
    const std::int64_t padded = in[c.input_spatial[s]] + w.pad_low[s] + w.pad_high[s];
    if (w.stride[s] < 1 || w.window_dilation[s] < 1) bad("a stride or dilation below 1");
    if (padded < reach) bad("a window larger than its padded input");
    out[c.output_spatial[s]] = (padded - reach) / w.stride[s] + 1;
  }
  Op op;
  op.opcode = "convolution";
  op.shape.dims = out;
  op.convolution = c;
  op.window = w;
  return add(hint, std::move(op), {input, kernel});
}

OpId ProgramBuilder::reduce_window(const std::string& hint, OpId x, const Window& w, const std::string& combine) {
  const Dims& in = dims(x);
  Dims out(in.size());
  for (std::size_t d = 0; d < in.size(); ++d) {
    const std::int64_t reach = (w.size[d] - 1) * w.window_dilation[d] + 1;
    const std::int64_t padded = in[d] + w.pad_low[d] + w.pad_high[d];
    if (w.stride[d] < 1 || w.window_dilation[d] < 1 || w.size[d] < 1) bad("a window size, stride or dilation below 1");
    if (padded < reach) bad("a window larger than its padded input");
    out[d] = (padded - reach) / w.stride[d] + 1;
  }
  Op op;
  op.opcode = "reduce-window";
  op.shape.dims = out;
  op.window = w;
  if (combine != "add") op.called.push_back(reducer_body(combine));
  return add(hint, std::move(op), {x});
}

OpId ProgramBuilder::slice(const std::string& hint, OpId x, const SliceDims& s, const Dims& out_dims) {
  const Dims& in = dims(x);
  if (s.start.size() != in.size() || s.stride.size() != in.size() || out_dims.size() != in.size()) bad("a slice of the wrong rank");
  bool whole = true;
  for (std::size_t d = 0; d < in.size(); ++d) {
    if (out_dims[d] < 1) bad("an empty slice (perftune has no empty tensors)");
    const std::int64_t last = s.start[d] + (out_dims[d] - 1) * s.stride[d];
    if (s.start[d] < 0 || s.start[d] >= in[d] || last < 0 || last >= in[d]) bad("a slice outside its operand");
    whole = whole && s.start[d] == 0 && s.stride[d] == 1 && out_dims[d] == in[d];
  }
  if (whole) return x;
  Op op;
  op.opcode = "slice";
  op.shape.dims = out_dims;
  op.slice = s;
  return add(hint, std::move(op), {x});
}

OpId ProgramBuilder::pad(const std::string& hint, OpId x, const PadDims& p, OpId value) {
  const Dims& in = dims(x);
  if (p.low.size() != in.size() || p.high.size() != in.size()) bad("pads of the wrong rank");
  Dims out = in;
  bool none = true;
  for (std::size_t d = 0; d < in.size(); ++d) {
    if (p.low[d] < 0 || p.high[d] < 0) bad("negative padding");
    out[d] += p.low[d] + p.high[d];
    none = none && p.low[d] == 0 && p.high[d] == 0;
  }
  if (none) return x;
  Op op;
  op.opcode = "pad";
  op.shape.dims = out;
  op.padding = p;
  if (!dims(value).empty()) bad("a scalar padding value");
  return add(hint, std::move(op), {x, value});
}

OpId ProgramBuilder::concatenate(const std::string& hint, const std::vector<OpId>& operands, std::int64_t axis) {
  if (operands.empty()) bad("a concatenation of nothing");
  if (operands.size() == 1) return operands.front();
  Dims out = dims(operands.front());
  const std::size_t a = checked_axis(axis, out.size());
  out[a] = 0;
  for (OpId o : operands) {
    const Dims& d = dims(o);
    for (std::size_t i = 0; i < out.size(); ++i)
      if (d.size() != out.size() || (i != a && d[i] != out[i])) bad("a concatenation of shapes that differ off its axis");
    out[a] += d[a];
  }
  Op op;
  op.opcode = "concatenate";
  op.shape.dims = out;
  op.dimensions = {static_cast<std::int64_t>(a)};
  return add(hint, std::move(op), operands);
}

OpId ProgramBuilder::gather(const std::string& hint, OpId x, std::int64_t axis, const Dims& index_dims, const std::vector<std::int64_t>& indices) {
  const Dims& in = dims(x);
  const std::size_t a = checked_axis(axis, in.size());
  if (static_cast<std::int64_t>(indices.size()) != element_count(index_dims)) bad("indices that do not fill their shape");
  for (std::int64_t i : indices)
    if (i < 0 || i >= in[a]) bad("an index " + std::to_string(i) + " outside [0, " + std::to_string(in[a]) + ")");
  Dims out(in.begin(), in.begin() + static_cast<std::ptrdiff_t>(a));
  out.insert(out.end(), index_dims.begin(), index_dims.end());
  out.insert(out.end(), in.begin() + static_cast<std::ptrdiff_t>(a) + 1, in.end());
  Op op;
  op.opcode = "gather";
  op.shape.dims = out;
  op.dimensions = {static_cast<std::int64_t>(a)};
  op.indices = indices;
  return add(hint, std::move(op), {x});
}

}  // namespace perftune::frontend
