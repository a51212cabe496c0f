#include "frontend/constant_folding.h"

#include <onnx/onnx_pb.h>

#include <cmath>
#include <numeric>

#include "frontend/shape_rules.h"

namespace perftune::frontend {

namespace {

// The most elements a folded tensor may have: shapes, indices and constants, and the odd weight
// a model transposes or scales before use.
constexpr std::int64_t kMaxFoldedElements = std::int64_t{1} << 26;

Dims strides_of(const Dims& dims) {
  Dims strides(dims.size(), 1);
  for (std::size_t d = dims.size(); d-- > 1;) strides[d - 1] = strides[d] * dims[d];
  return strides;
}

// A tensor of `out` dims whose element at each index is `in`'s at `source(index)` (a flat index).
template <typename Source>
KnownTensor remap(NodeContext& c, const KnownTensor& in, const Dims& out, Source source) {
  if (element_count(out) > kMaxFoldedElements) c.fail("a folded constant of at most 2^26 elements");
  KnownTensor t;
  t.kind = in.kind;
  t.dims = out;
  const std::int64_t count = element_count(out);
  t.values.resize(static_cast<std::size_t>(count));
  Dims index(out.size(), 0);
  for (std::int64_t i = 0; i < count; ++i) {
    std::int64_t rest = i;
    for (std::size_t d = out.size(); d-- > 0;) {
      index[d] = out[d] ? rest % out[d] : 0;
      rest = out[d] ? rest / out[d] : 0;
    }
    t.values[static_cast<std::size_t>(i)] = in.values[static_cast<std::size_t>(source(index))];
  }
  return t;
}

// `in` broadcast to `out` as numpy does.
KnownTensor broadcast(NodeContext& c, const KnownTensor& in, const Dims& out) {
  const Dims strides = strides_of(in.dims);
  const std::size_t lead = out.size() - in.dims.size();
  return remap(c, in, out, [&](const Dims& index) {
    std::int64_t flat = 0;
    for (std::size_t d = 0; d < in.dims.size(); ++d) flat += (in.dims[d] == 1 ? 0 : index[lead + d]) * strides[d];
    return flat;
  });
}

KnownTensor reshaped(const KnownTensor& in, const Dims& dims) {
  KnownTensor t = in;
  t.dims = dims;
  return t;
}

ValueKind joined(ValueKind a, ValueKind b) { return a == ValueKind::kFloat || b == ValueKind::kFloat ? ValueKind::kFloat : ValueKind::kInt; }

template <typename F>
Fold elementwise(F f, bool to_bool = false) {
  return [f, to_bool](NodeContext& c, const std::vector<const KnownTensor*>& in) {
    Dims out = in[0]->dims;
    for (const KnownTensor* t : in) out = c.builder().broadcast_shape(out, t->dims);
    std::vector<KnownTensor> args;
    ValueKind kind = in[0]->kind;
    for (const KnownTensor* t : in) {
      args.push_back(broadcast(c, *t, out));
      kind = joined(kind, t->kind);
    }
    KnownTensor r = args[0];
    r.kind = to_bool ? ValueKind::kBool : kind;
    for (std::size_t i = 0; i < r.values.size(); ++i) {
      std::vector<double> x;
      for (const KnownTensor& a : args) x.push_back(a.values[i]);
      double v = f(x);
      if (r.kind == ValueKind::kInt) v = std::trunc(v);
      r.values[i] = v;
    }
    return std::vector<KnownTensor>{r};
  };
}

// A structural op folded through the rule its translation uses.
template <Dims (*rule)(NodeContext&, const Dims&)>
std::vector<KnownTensor> reshape_fold(NodeContext& c, const std::vector<const KnownTensor*>& in) {
  return {reshaped(*in[0], rule(c, in[0]->dims))};
}

std::vector<KnownTensor> transpose_fold(NodeContext& c, const std::vector<const KnownTensor*>& in) {
  const KnownTensor& x = *in[0];
  const Dims perm = transpose_permutation(c, x.dims.size());
  Dims out;
  for (std::int64_t p : perm) out.push_back(x.dims[static_cast<std::size_t>(p)]);
  const Dims strides = strides_of(x.dims);
  return {remap(c, x, out, [&](const Dims& index) {
    std::int64_t flat = 0;
    for (std::size_t i = 0; i < perm.size(); ++i) flat += index[i] * strides[static_cast<std::size_t>(perm[i])];
    return flat;
  })};
}

std::vector<KnownTensor> gather_fold(NodeContext& c, const std::vector<const KnownTensor*>& in) {
  const KnownTensor& x = *in[0];
  const GatherSpec spec = gather_spec(c, x.dims);
  const auto axis = static_cast<std::size_t>(spec.axis);
  Dims out(x.dims.begin(), x.dims.begin() + static_cast<std::ptrdiff_t>(axis));
  out.insert(out.end(), spec.index_dims.begin(), spec.index_dims.end());
  out.insert(out.end(), x.dims.begin() + static_cast<std::ptrdiff_t>(axis) + 1, x.dims.end());
  const Dims strides = strides_of(x.dims), index_strides = strides_of(spec.index_dims);
  const std::size_t k = spec.index_dims.size();
  return {remap(c, x, out, [&](const Dims& index) {
    std::int64_t which = 0;
    for (std::size_t i = 0; i < k; ++i) which += index[axis + i] * index_strides[i];
    std::int64_t flat = spec.indices[static_cast<std::size_t>(which)] * strides[axis];
    for (std::size_t d = 0; d < axis; ++d) flat += index[d] * strides[d];
    for (std::size_t d = axis + 1; d < x.dims.size(); ++d) flat += index[d + k - 1] * strides[d];
    return flat;
  })};
}

std::vector<KnownTensor> slice_fold(NodeContext& c, const std::vector<const KnownTensor*>& in) {
  const KnownTensor& x = *in[0];
  const SliceSpec spec = slice_spec(c, x.dims);
  const Dims strides = strides_of(x.dims);
  return {remap(c, x, spec.out, [&](const Dims& index) {
    std::int64_t flat = 0;
    for (std::size_t d = 0; d < index.size(); ++d) flat += (spec.slice.start[d] + index[d] * spec.slice.stride[d]) * strides[d];
    return flat;
  })};
}

std::vector<KnownTensor> concat_fold(NodeContext& c, const std::vector<const KnownTensor*>& in) {
  std::vector<const KnownTensor*> parts;
  for (const KnownTensor* t : in)
    if (t) parts.push_back(t);
  const std::size_t rank = parts.front()->dims.size();
  const auto axis = static_cast<std::size_t>(c.axis(c.attribute_int("axis", 0), rank));
  KnownTensor out;
  out.kind = parts.front()->kind;
  out.dims = parts.front()->dims;
  out.dims[axis] = 0;
  for (const KnownTensor* t : parts) {
    if (t->dims.size() != rank) c.fail("inputs of one rank");
    for (std::size_t d = 0; d < rank; ++d)
      if (d != axis && t->dims[d] != out.dims[d]) c.fail("inputs whose shapes differ only along the axis");
    out.dims[axis] += t->dims[axis];
    out.kind = joined(out.kind, t->kind);
  }
  if (element_count(out.dims) > kMaxFoldedElements) c.fail("a folded constant of at most 2^26 elements");
  const std::int64_t outer = std::accumulate(out.dims.begin(), out.dims.begin() + static_cast<std::ptrdiff_t>(axis), std::int64_t{1}, std::multiplies<>());
  for (std::int64_t o = 0; o < outer; ++o)
    for (const KnownTensor* t : parts) {
      const std::int64_t block = t->count() / std::max<std::int64_t>(outer, 1);
      out.values.insert(out.values.end(), t->values.begin() + o * block, t->values.begin() + (o + 1) * block);
    }
  return {out};
}

std::vector<KnownTensor> expand_fold(NodeContext& c, const std::vector<const KnownTensor*>& in) {
  return {broadcast(c, *in[0], expand_dims(c, in[0]->dims))};
}

std::vector<KnownTensor> where_fold(NodeContext& c, const std::vector<const KnownTensor*>& in) {
  auto result = elementwise([](const std::vector<double>& x) { return x[0] != 0.0 ? x[1] : x[2]; })(c, in);
  result[0].kind = joined(in[1]->kind, in[2]->kind);
  return result;
}

std::vector<KnownTensor> range_fold(NodeContext& c, const std::vector<const KnownTensor*>& in) {
  for (const KnownTensor* t : in)
    if (t->count() != 1) c.fail("scalar start, limit and delta");
  const double start = in[0]->values[0], limit = in[1]->values[0], delta = in[2]->values[0];
  if (delta == 0) c.fail("a non-zero delta");
  const double n = std::max(0.0, std::ceil((limit - start) / delta));
  if (n < 1 || n > kMaxFoldedElements) c.fail("a range of 1 to 2^26 elements");
  KnownTensor t;
  t.kind = in[0]->kind;
  t.dims = {static_cast<std::int64_t>(n)};
  for (std::int64_t i = 0; i < t.dims[0]; ++i) t.values.push_back(start + static_cast<double>(i) * delta);
  return {t};
}

std::vector<KnownTensor> cast_fold(NodeContext& c, const std::vector<const KnownTensor*>& in) {
  c.expect_attributes({"to", "saturate"});
  KnownTensor t = *in[0];
  const auto to = c.attribute_int("to", 0);
  if (to == onnx::TensorProto_DataType_FLOAT || to == onnx::TensorProto_DataType_DOUBLE || to == onnx::TensorProto_DataType_FLOAT16) {
    t.kind = ValueKind::kFloat;
  } else if (to == onnx::TensorProto_DataType_BOOL) {
    t.kind = ValueKind::kBool;
    for (double& v : t.values) v = v != 0.0 ? 1.0 : 0.0;
  } else {
    t.kind = ValueKind::kInt;
    for (double& v : t.values) v = std::trunc(v);
  }
  return {t};
}

std::vector<KnownTensor> reduce_product_fold(NodeContext& c, const std::vector<const KnownTensor*>& in) {
  c.expect_attributes({"axes", "keepdims"});
  const KnownTensor& x = *in[0];
  if (x.dims.size() > 1 || c.has_attribute("axes")) c.fail("a 1-D input reduced whole (folding ReduceProd of a shape)");
  KnownTensor t;
  t.kind = x.kind;
  t.values = {std::accumulate(x.values.begin(), x.values.end(), 1.0, std::multiplies<>())};
  if (c.attribute_int("keepdims", 1)) t.dims = {1};
  return {t};
}

}  // namespace

const FoldTable& folders() {
  static const FoldTable table = [] {
    FoldTable t;
    const auto one = [](std::vector<KnownTensor> in) { return in; };
    t["Identity"] = [one](NodeContext&, const std::vector<const KnownTensor*>& in) { return one({*in[0]}); };
    t["Cast"] = cast_fold;
    t["Reshape"] = reshape_fold<reshape_dims>;
    t["Flatten"] = reshape_fold<flatten_dims>;
    t["Squeeze"] = reshape_fold<squeeze_dims>;
    t["Unsqueeze"] = reshape_fold<unsqueeze_dims>;
    t["Transpose"] = transpose_fold;
    t["Gather"] = gather_fold;
    t["Slice"] = slice_fold;
    t["Concat"] = concat_fold;
    t["Expand"] = expand_fold;
    t["Where"] = where_fold;
    t["Range"] = range_fold;
    t["ReduceProd"] = reduce_product_fold;
    t["Add"] = elementwise([](const std::vector<double>& x) { return x[0] + x[1]; });
    t["Sub"] = elementwise([](const std::vector<double>& x) { return x[0] - x[1]; });
    t["Mul"] = elementwise([](const std::vector<double>& x) { return x[0] * x[1]; });
    t["Div"] = elementwise([](const std::vector<double>& x) { return x[0] / x[1]; });
    t["Pow"] = elementwise([](const std::vector<double>& x) { return std::pow(x[0], x[1]); });
    t["Max"] = elementwise([](const std::vector<double>& x) { return *std::max_element(x.begin(), x.end()); });
    t["Min"] = elementwise([](const std::vector<double>& x) { return *std::min_element(x.begin(), x.end()); });
    t["Neg"] = elementwise([](const std::vector<double>& x) { return -x[0]; });
    t["Abs"] = elementwise([](const std::vector<double>& x) { return std::fabs(x[0]); });
    t["Sqrt"] = elementwise([](const std::vector<double>& x) { return std::sqrt(x[0]); });
    t["Floor"] = elementwise([](const std::vector<double>& x) { return std::floor(x[0]); });
    t["Ceil"] = elementwise([](const std::vector<double>& x) { return std::ceil(x[0]); });
    t["Equal"] = elementwise([](const std::vector<double>& x) { return x[0] == x[1] ? 1.0 : 0.0; }, true);
    t["Less"] = elementwise([](const std::vector<double>& x) { return x[0] < x[1] ? 1.0 : 0.0; }, true);
    t["Greater"] = elementwise([](const std::vector<double>& x) { return x[0] > x[1] ? 1.0 : 0.0; }, true);
    t["Not"] = elementwise([](const std::vector<double>& x) { return x[0] == 0.0 ? 1.0 : 0.0; }, true);
    return t;
  }();
  return table;
}

bool try_fold(NodeContext& c, const FoldTable& table) {
  const auto it = table.find(c.node().op_type());
  if (it == table.end() || c.input_count() == 0) return false;
  std::vector<const KnownTensor*> inputs;
  for (std::size_t i = 0; i < c.input_count(); ++i) {
    if (!c.present(i)) {
      inputs.push_back(nullptr);
      continue;
    }
    if (!c.known(i)) return false;
    inputs.push_back(&c.constant(i));
  }
  if (!inputs.front()) return false;
  std::vector<KnownTensor> outputs = it->second(c, inputs);
  for (std::size_t i = 0; i < outputs.size(); ++i) c.set_known_output(i, std::move(outputs[i]));
  return true;
}

}  // namespace perftune::frontend
