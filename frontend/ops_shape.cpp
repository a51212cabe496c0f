// Structural ops on values of the program (Transpose, Reshape and its kin, Concat, Slice, Pad,
// Gather on constant indices, Split, Expand), the ops that pass a value on (Identity, Dropout in
// inference, Cast to float), and the ones whose result is known at import (Constant, Shape,
// ConstantOfShape, Size).
#include <onnx/onnx_pb.h>

#include "frontend/node_context.h"
#include "frontend/shape_rules.h"

namespace perftune::frontend {

namespace {

KnownTensor int_tensor(const Dims& values) {
  KnownTensor t;
  t.kind = ValueKind::kInt;
  t.dims = {static_cast<std::int64_t>(values.size())};
  t.values.assign(values.begin(), values.end());
  return t;
}

void constant(NodeContext& c) {
  c.expect_attributes({"value", "value_float", "value_floats", "value_int", "value_ints", "sparse_value", "value_string", "value_strings"});
  if (auto tensor = c.attribute_tensor("value")) {
    c.set_known_output(0, std::move(*tensor));
    return;
  }
  KnownTensor t;
  if (c.has_attribute("value_float")) {
    t.values = {c.attribute_float("value_float", 0.0f)};
  } else if (c.has_attribute("value_floats")) {
    const auto v = c.attribute_floats("value_floats");
    t.values.assign(v.begin(), v.end());
    t.dims = {static_cast<std::int64_t>(v.size())};
  } else if (c.has_attribute("value_int")) {
    t.kind = ValueKind::kInt;
    t.values = {static_cast<double>(c.attribute_int("value_int", 0))};
  } else if (c.has_attribute("value_ints")) {
    t = int_tensor(c.attribute_ints("value_ints", {}));
  } else {
    c.fail("a dense numeric value (value, value_float(s) or value_int(s))");
  }
  c.set_known_output(0, std::move(t));
}

// Shape (with opset 15's start and end): the input's dimensions, known at import.
void shape(NodeContext& c) {
  c.expect_attributes({"start", "end"});
  const Dims dims = c.dims(0);
  const auto rank = static_cast<std::int64_t>(dims.size());
  const auto clamp = [&](std::int64_t v) { return std::clamp<std::int64_t>(v < 0 ? v + rank : v, 0, rank); };
  const std::int64_t start = clamp(c.attribute_int("start", 0)), end = clamp(c.attribute_int("end", rank));
  c.set_known_output(0, int_tensor(start < end ? Dims(dims.begin() + start, dims.begin() + end) : Dims{}));
}

void constant_of_shape(NodeContext& c) {
  c.expect_attributes({"value"});
  KnownTensor t;
  t.dims = c.constant(0).ints();
  for (std::int64_t d : t.dims)
    if (d < 1) c.fail("a shape of positive dimensions (perftune has no empty tensors)");
  if (element_count(t.dims) > (std::int64_t{1} << 28)) c.fail("a constant of at most 2^28 elements");
  double fill = 0.0;
  if (auto value = c.attribute_tensor("value")) {
    if (value->count() != 1) c.fail("a one-element 'value'");
    fill = value->values[0];
    t.kind = value->kind;
  }
  t.values.assign(static_cast<std::size_t>(element_count(t.dims)), fill);
  c.set_known_output(0, std::move(t));
}

// Ops that pass their input on: the same value under another name.
void pass_on(NodeContext& c) {
  c.set_output(0, c.value(0));
}

void dropout(NodeContext& c) {
  c.expect_attributes({"ratio", "seed", "is_test"});
  if (c.present(2) && (!c.known(2) || c.constant(2).values.at(0) != 0.0)) c.fail("training_mode false (training mode is not supported: inference only)");
  c.only_first_output();
  pass_on(c);
}

void cast(NodeContext& c) {
  c.expect_attributes({"to", "saturate"});
  if (c.attribute_int("to", 0) != onnx::TensorProto_DataType_FLOAT) c.fail("a cast to float (the program computes in f32)");
  pass_on(c);
}

void concat(NodeContext& c) {
  c.expect_attributes({"axis"});
  std::vector<OpId> parts;
  for (std::size_t i = 0; i < c.input_count(); ++i)
    if (c.present(i)) parts.push_back(c.value(i));
  if (parts.empty()) c.fail("at least one input");
  const auto axis = c.axis(c.attribute_int("axis", 0), c.builder().dims(parts.front()).size());
  const OpId out = c.builder().concatenate(c.hint(), parts, axis);
  c.set_output(0, parts.size() == 1 ? c.builder().elementwise(c.hint(), "copy", {out}) : out);
}

void slice(NodeContext& c) {
  const OpId x = c.value(0);
  const SliceSpec spec = slice_spec(c, c.builder().dims(x));
  const OpId out = c.builder().slice(c.hint(), x, spec.slice, spec.out);
  c.set_output(0, out == x ? c.builder().elementwise(c.hint(), "copy", {x}) : out);
}

void pad(NodeContext& c) {
  const OpId x = c.value(0);
  const PadSpec spec = pad_spec(c, c.builder().dims(x).size());
  // The padding value: a constant, or (opset 11 on) a scalar the graph computes.
  OpId value = c.opset() >= 11 && c.present(2) && !c.known(2) ? c.value(2) : c.builder().scalar(c.hint(".value"), spec.value);
  if (element_count(c.builder().dims(value)) != 1) c.fail("a scalar constant_value");
  value = c.builder().reshape(c.hint(".value"), value, {});
  const OpId out = c.builder().pad(c.hint(), x, spec.padding, value);
  c.set_output(0, out == x ? c.builder().elementwise(c.hint(), "copy", {x}) : out);
}

void gather(NodeContext& c) {
  const OpId x = c.value(0);
  const GatherSpec spec = gather_spec(c, c.builder().dims(x));
  c.set_output(0, c.builder().gather(c.hint(), x, spec.axis, spec.index_dims, spec.indices));
}

void split(NodeContext& c) {
  const OpId x = c.value(0);
  const Dims in = c.builder().dims(x);
  const SplitSpec spec = split_spec(c, in);
  std::int64_t start = 0;
  for (std::size_t i = 0; i < spec.sizes.size(); ++i) {
    SliceDims s;
    s.start.assign(in.size(), 0);
    s.stride.assign(in.size(), 1);
    s.start[static_cast<std::size_t>(spec.axis)] = start;
    Dims out = in;
    out[static_cast<std::size_t>(spec.axis)] = spec.sizes[i];
    const std::string hint = c.hint() + "." + std::to_string(i);
    OpId part = c.builder().slice(hint, x, s, out);
    if (part == x) part = c.builder().elementwise(hint, "copy", {x});
    c.set_output(i, part);
    start += spec.sizes[i];
  }
}

// A reshape-like op: its output dimensions from `rule`, then an IR reshape.
template <Dims (*rule)(NodeContext&, const Dims&)>
void reshaping(NodeContext& c) {
  const OpId x = c.value(0);
  const Dims out = rule(c, c.builder().dims(x));
  const OpId y = c.builder().reshape(c.hint(), x, out);
  c.set_output(0, y == x ? c.builder().elementwise(c.hint(), "copy", {x}) : y);
}

}  // namespace

void add_shape_ops(TranslationTable& t) {
  t["Constant"] = constant;
  t["Shape"] = shape;
  t["Size"] = [](NodeContext& c) {
    c.expect_attributes({});
    KnownTensor size;
    size.kind = ValueKind::kInt;
    size.values = {static_cast<double>(element_count(c.dims(0)))};
    c.set_known_output(0, std::move(size));
  };
  t["ConstantOfShape"] = constant_of_shape;
  t["Identity"] = [](NodeContext& c) {
    c.expect_attributes({});
    pass_on(c);
  };
  t["Dropout"] = dropout;
  t["Cast"] = cast;
  t["Transpose"] = [](NodeContext& c) {
    const OpId x = c.value(0);
    const OpId y = c.builder().transpose(c.hint(), x, transpose_permutation(c, c.builder().dims(x).size()));
    c.set_output(0, y == x ? c.builder().elementwise(c.hint(), "copy", {x}) : y);
  };
  t["Reshape"] = reshaping<reshape_dims>;
  t["Flatten"] = reshaping<flatten_dims>;
  t["Squeeze"] = reshaping<squeeze_dims>;
  t["Unsqueeze"] = reshaping<unsqueeze_dims>;
  t["Expand"] = [](NodeContext& c) {
    const OpId x = c.value(0);
    const OpId y = c.builder().broadcast_to(c.hint(), x, expand_dims(c, c.builder().dims(x)));
    c.set_output(0, y == x ? c.builder().elementwise(c.hint(), "copy", {x}) : y);
  };
  t["Concat"] = concat;
  t["Slice"] = slice;
  t["Pad"] = pad;
  t["Gather"] = gather;
  t["Split"] = split;
}

}  // namespace perftune::frontend
