#include "frontend/shape_rules.h"

#include <algorithm>
#include <limits>
#include <numeric>
#include <set>

namespace perftune::frontend {

namespace {

// Axes from the attribute (before `input_opset`) or the known input `slot`.
Dims axes_of(NodeContext& c, std::int64_t input_opset, std::size_t slot) {
  if (c.opset() >= input_opset) return c.present(slot) ? c.constant(slot).ints() : Dims{};
  return c.attribute_ints("axes", {});
}

}  // namespace

Dims reshape_dims(NodeContext& c, const Dims& in) {
  c.expect_attributes({"allowzero"});
  const Dims shape = c.constant(1).ints();
  const bool allow_zero = c.attribute_int("allowzero", 0) != 0;
  Dims out;
  int inferred = -1;
  std::int64_t known = 1;
  for (std::size_t i = 0; i < shape.size(); ++i) {
    std::int64_t d = shape[i];
    if (d == 0 && !allow_zero) {
      if (i >= in.size()) c.fail("a 0 in the shape only where the input has that dimension");
      d = in[i];
    }
    if (d == -1) {
      if (inferred >= 0) c.fail("at most one -1 in the shape");
      inferred = static_cast<int>(i);
      out.push_back(1);
      continue;
    }
    if (d < 0) c.fail("shape entries of -1 or more, found " + std::to_string(d));
    out.push_back(d);
    known *= d;
  }
  const std::int64_t total = element_count(in);
  if (inferred >= 0) {
    if (known == 0 || total % known != 0) c.fail("a shape whose -1 can be inferred from " + std::to_string(total) + " elements");
    out[static_cast<std::size_t>(inferred)] = total / known;
  }
  if (element_count(out) != total) c.fail("a shape of " + std::to_string(total) + " elements");
  return out;
}

Dims flatten_dims(NodeContext& c, const Dims& in) {
  c.expect_attributes({"axis"});
  const std::int64_t rank = static_cast<std::int64_t>(in.size());
  std::int64_t axis = c.attribute_int("axis", 1);
  if (axis < -rank || axis > rank) c.fail("an axis in [-rank, rank]");
  if (axis < 0) axis += rank;
  const std::int64_t outer = std::accumulate(in.begin(), in.begin() + axis, std::int64_t{1}, std::multiplies<>());
  const std::int64_t inner = std::accumulate(in.begin() + axis, in.end(), std::int64_t{1}, std::multiplies<>());
  return {outer, inner};
}

Dims squeeze_dims(NodeContext& c, const Dims& in) {
  c.expect_attributes({"axes"});
  const Dims given = axes_of(c, 13, 1);
  std::set<std::int64_t> axes;
  for (std::int64_t a : given) {
    const std::int64_t axis = c.axis(a, in.size());
    if (in[static_cast<std::size_t>(axis)] != 1) c.fail("squeezed axes of size 1 (axis " + std::to_string(a) + " has " + std::to_string(in[static_cast<std::size_t>(axis)]) + ")");
    axes.insert(axis);
  }
  Dims out;
  for (std::size_t d = 0; d < in.size(); ++d)
    if (given.empty() ? in[d] != 1 : !axes.count(static_cast<std::int64_t>(d))) out.push_back(in[d]);
  return out;
}

Dims unsqueeze_dims(NodeContext& c, const Dims& in) {
  c.expect_attributes({"axes"});
  const Dims given = axes_of(c, 13, 1);
  if (given.empty()) c.fail("axes to insert");
  const std::size_t rank = in.size() + given.size();
  std::set<std::int64_t> axes;
  for (std::int64_t a : given)
    if (!axes.insert(c.axis(a, rank)).second) c.fail("axes without repeats");
  Dims out;
  std::size_t next = 0;
  for (std::size_t d = 0; d < rank; ++d) out.push_back(axes.count(static_cast<std::int64_t>(d)) ? 1 : in[next++]);
  return out;
}

Dims transpose_permutation(NodeContext& c, std::size_t rank) {
  c.expect_attributes({"perm"});
  Dims reversed(rank);
  for (std::size_t i = 0; i < rank; ++i) reversed[i] = static_cast<std::int64_t>(rank - 1 - i);
  const Dims perm = c.attribute_ints("perm", reversed);
  if (perm.size() != rank) c.fail("'perm' with one entry per dimension");
  Dims sorted = perm;
  std::sort(sorted.begin(), sorted.end());
  for (std::size_t i = 0; i < rank; ++i)
    if (sorted[i] != static_cast<std::int64_t>(i)) c.fail("'perm' to be a permutation of 0.." + std::to_string(rank - 1));
  return perm;
}

Dims expand_dims(NodeContext& c, const Dims& in) {
  c.expect_attributes({});
  const Dims shape = c.constant(1).ints();
  for (std::int64_t d : shape)
    if (d < 0) c.fail("a shape of non-negative dimensions");
  return c.builder().broadcast_shape(in, shape);
}

SliceSpec slice_spec(NodeContext& c, const Dims& in) {
  const std::size_t rank = in.size();
  Dims starts, ends, axes, steps;
  if (c.opset() < 10) {
    c.expect_attributes({"starts", "ends", "axes"});
    starts = c.attribute_ints("starts", {});
    ends = c.attribute_ints("ends", {});
    axes = c.attribute_ints("axes", {});
  } else {
    c.expect_attributes({});
    starts = c.constant(1).ints();
    ends = c.constant(2).ints();
    if (c.present(3)) axes = c.constant(3).ints();
    if (c.present(4)) steps = c.constant(4).ints();
  }
  if (axes.empty())
    for (std::size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<std::int64_t>(i));
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size())
    c.fail("starts, ends, axes and steps of one length");
  SliceSpec spec;
  spec.slice.start.assign(rank, 0);
  spec.slice.stride.assign(rank, 1);
  spec.out = in;
  std::set<std::int64_t> seen;
  for (std::size_t i = 0; i < starts.size(); ++i) {
    const auto axis = static_cast<std::size_t>(c.axis(axes[i], rank));
    if (!seen.insert(static_cast<std::int64_t>(axis)).second) c.fail("axes without repeats");
    const std::int64_t dim = in[axis], step = steps[i];
    if (step == 0) c.fail("non-zero steps");
    // ONNX's rules: negative positions count from the end, then clamp to the dimension
    // ([0, dim] forwards, [-1, dim - 1] backwards).
    const auto position = [&](std::int64_t v) {
      if (v < 0) v = v <= std::numeric_limits<std::int64_t>::min() + dim ? std::numeric_limits<std::int64_t>::min() : v + dim;
      return step > 0 ? std::clamp<std::int64_t>(v, 0, dim) : std::clamp<std::int64_t>(v, -1, dim - 1);
    };
    const std::int64_t start = position(starts[i]), end = position(ends[i]);
    const std::int64_t count = step > 0 ? (end - start + step - 1) / step : (start - end - step - 1) / -step;
    if (count <= 0) c.fail("a non-empty slice (perftune has no empty tensors)");
    spec.slice.start[axis] = start;
    spec.slice.stride[axis] = step;
    spec.out[axis] = count;
  }
  return spec;
}

PadSpec pad_spec(NodeContext& c, std::size_t rank) {
  PadSpec spec;
  Dims pads;
  if (c.opset() < 11) {
    c.expect_attributes({"mode", "pads", "paddings", "value"});
    pads = c.attribute_ints(c.has_attribute("pads") ? "pads" : "paddings", {});
    spec.value = c.attribute_float("value", 0.0f);
  } else {
    c.expect_attributes({"mode"});
    pads = c.constant(1).ints();
    if (c.present(2) && c.known(2)) {  // else a value the graph computes (ops_shape.cpp)
      const KnownTensor& value = c.constant(2);
      if (value.count() != 1) c.fail("a scalar constant_value");
      spec.value = static_cast<float>(value.values[0]);
    }
  }
  const std::string mode = c.attribute_string("mode", "constant");
  if (mode != "constant") c.fail("mode 'constant' ('" + mode + "' padding is not supported)");
  if (pads.size() != 2 * rank) c.fail("pads with " + std::to_string(2 * rank) + " entries (begins, then ends)");
  for (std::int64_t p : pads)
    if (p < 0) c.fail("non-negative pads (negative pads crop; use Slice)");
  spec.padding.low.assign(pads.begin(), pads.begin() + static_cast<std::ptrdiff_t>(rank));
  spec.padding.high.assign(pads.begin() + static_cast<std::ptrdiff_t>(rank), pads.end());
  return spec;
}

GatherSpec gather_spec(NodeContext& c, const Dims& in) {
  c.expect_attributes({"axis"});
  GatherSpec spec;
  spec.axis = c.axis(c.attribute_int("axis", 0), in.size());
  const KnownTensor& indices = c.constant(1);
  if (indices.kind == ValueKind::kFloat) c.fail("integer indices");
  spec.index_dims = indices.dims;
  const std::int64_t dim = in[static_cast<std::size_t>(spec.axis)];
  for (std::int64_t i : indices.ints()) {
    if (i < -dim || i >= dim) c.fail("indices in [" + std::to_string(-dim) + ", " + std::to_string(dim) + "), found " + std::to_string(i));
    spec.indices.push_back(i < 0 ? i + dim : i);
  }
  return spec;
}

SplitSpec split_spec(NodeContext& c, const Dims& in) {
  c.expect_attributes({"axis", "split"});
  SplitSpec spec;
  spec.axis = c.axis(c.attribute_int("axis", 0), in.size());
  const std::int64_t dim = in[static_cast<std::size_t>(spec.axis)];
  if (c.opset() >= 13 && c.present(1)) spec.sizes = c.constant(1).ints();
  else spec.sizes = c.attribute_ints("split", {});
  const auto parts = static_cast<std::int64_t>(c.output_count());
  if (spec.sizes.empty()) {
    if (parts == 0 || dim % parts != 0) c.fail("a dimension of " + std::to_string(dim) + " that splits into " + std::to_string(parts) + " equal parts");
    spec.sizes.assign(static_cast<std::size_t>(parts), dim / parts);
  }
  if (static_cast<std::int64_t>(spec.sizes.size()) != parts) c.fail("one split size per output");
  std::int64_t total = 0;
  for (std::int64_t s : spec.sizes) {
    if (s < 1) c.fail("split sizes of at least 1 (perftune has no empty tensors)");
    total += s;
  }
  if (total != dim) c.fail("split sizes that add up to the dimension, " + std::to_string(dim));
  return spec;
}

}  // namespace perftune::frontend
