// Conv, Gemm and MatMul: the IR's convolution (NCHW input, OIHW weights, feature groups, dilation
// and padding as a window) and dot (contracting and batch dimensions), with bias, scale and
// numpy's batch broadcasting as separate IR ops.
#include <numeric>

#include "frontend/node_context.h"

namespace perftune::frontend {

namespace {

// pad_low and pad_high per spatial dimension from ONNX's auto_pad and pads.
void conv_padding(NodeContext& c, const Dims& in_spatial, const Dims& kernel, const Dims& strides, const Dims& dilations, Window& w) {
  const std::size_t n = in_spatial.size();
  const std::string auto_pad = c.attribute_string("auto_pad", "NOTSET");
  w.pad_low.assign(n, 0);
  w.pad_high.assign(n, 0);
  if (auto_pad == "NOTSET") {
    const Dims pads = c.attribute_ints("pads", Dims(2 * n, 0));
    if (pads.size() != 2 * n) c.fail("'pads' with " + std::to_string(2 * n) + " entries (begins, then ends)");
    for (std::size_t s = 0; s < n; ++s) {
      if (pads[s] < 0 || pads[n + s] < 0) c.fail("non-negative pads");
      w.pad_low[s] = pads[s];
      w.pad_high[s] = pads[n + s];
    }
  } else if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    for (std::size_t s = 0; s < n; ++s) {
      const std::int64_t out = (in_spatial[s] + strides[s] - 1) / strides[s];
      const std::int64_t total = std::max<std::int64_t>(0, (out - 1) * strides[s] + (kernel[s] - 1) * dilations[s] + 1 - in_spatial[s]);
      w.pad_low[s] = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      w.pad_high[s] = total - w.pad_low[s];
    }
  } else if (auto_pad != "VALID") {
    c.fail("auto_pad NOTSET, SAME_UPPER, SAME_LOWER or VALID, found '" + auto_pad + "'");
  }
}

void conv(NodeContext& c) {
  c.expect_attributes({"auto_pad", "dilations", "group", "kernel_shape", "pads", "strides"});
  ProgramBuilder& b = c.builder();
  const OpId x = c.value(0), weights = c.value(1);
  const Dims& in = b.dims(x);
  const Dims& k = b.dims(weights);
  if (in.size() < 3 || k.size() != in.size()) c.fail("an input of rank 3 or more (N, C, spatial...) and weights of the same rank");
  const std::size_t n = in.size() - 2;
  const Dims kernel(k.begin() + 2, k.end());
  if (c.attribute_ints("kernel_shape", kernel) != kernel) c.fail("a kernel_shape that matches the weights' spatial dimensions");
  Window w;
  w.size = kernel;
  w.stride = c.attribute_ints("strides", Dims(n, 1));
  w.window_dilation = c.attribute_ints("dilations", Dims(n, 1));
  if (w.stride.size() != n || w.window_dilation.size() != n) c.fail("one stride and one dilation per spatial dimension");
  conv_padding(c, Dims(in.begin() + 2, in.end()), kernel, w.stride, w.window_dilation, w);
  ConvolutionDims d;
  d.input_batch = d.output_batch = d.kernel_output_feature = 0;
  d.input_feature = d.output_feature = d.kernel_input_feature = 1;
  for (std::size_t s = 0; s < n; ++s) {
    d.input_spatial.push_back(static_cast<std::int64_t>(2 + s));
    d.kernel_spatial.push_back(static_cast<std::int64_t>(2 + s));
    d.output_spatial.push_back(static_cast<std::int64_t>(2 + s));
  }
  d.feature_group_count = c.attribute_int("group", 1);
  OpId out = b.convolution(c.present(2) ? c.hint(".conv") : c.hint(), x, weights, d, w);
  if (c.present(2)) {
    if (c.dims(2) != Dims{k[0]}) c.fail("a bias of shape [" + std::to_string(k[0]) + "]");
    Dims per_channel(n + 1, 1);
    per_channel[0] = k[0];
    out = b.binary(c.hint(), "add", out, c.value_as(2, per_channel));
  }
  c.set_output(0, out);
}

void gemm(NodeContext& c) {
  c.expect_attributes({"alpha", "beta", "transA", "transB"});
  ProgramBuilder& b = c.builder();
  const OpId a = c.value(0), w = c.value(1);
  if (b.dims(a).size() != 2 || b.dims(w).size() != 2) c.fail("matrices A and B of rank 2");
  DotDims d;
  d.lhs_contracting = {c.attribute_int("transA", 0) ? 0 : 1};
  d.rhs_contracting = {c.attribute_int("transB", 0) ? 1 : 0};
  const float alpha = c.attribute_float("alpha", 1.0f), beta = c.attribute_float("beta", 1.0f);
  const bool biased = c.present(2);
  OpId out = b.dot(alpha != 1.0f || biased ? c.hint(".dot") : c.hint(), a, w, d);
  if (alpha != 1.0f) out = b.with_scalar(biased ? c.hint(".scaled") : c.hint(), "multiply", out, alpha);
  if (biased) {
    OpId bias = c.value(2);
    if (beta != 1.0f) bias = b.with_scalar(c.hint(".beta"), "multiply", bias, beta);
    out = b.binary(c.hint(), "add", out, bias);
  }
  c.set_output(0, out);
}

void matmul(NodeContext& c) {
  c.expect_attributes({});
  ProgramBuilder& b = c.builder();
  OpId lhs = c.value(0), rhs = c.value(1);
  const bool vector_lhs = b.dims(lhs).size() == 1, vector_rhs = b.dims(rhs).size() == 1;
  if (b.dims(lhs).empty() || b.dims(rhs).empty()) c.fail("inputs of rank 1 or more");
  if (vector_lhs) lhs = b.reshape(c.hint(".lhs"), lhs, {1, b.dims(lhs)[0]});
  if (vector_rhs) rhs = b.reshape(c.hint(".rhs"), rhs, {b.dims(rhs)[0], 1});
  const Dims l = b.dims(lhs), r = b.dims(rhs);
  OpId out;
  if (r.size() == 2) {  // weights: contract the lhs's last dimension, every leading one kept
    DotDims d;
    d.lhs_contracting = {static_cast<std::int64_t>(l.size() - 1)};
    d.rhs_contracting = {0};
    out = b.dot(c.hint(), lhs, rhs, d);
  } else {
    const Dims batch = b.broadcast_shape(Dims(l.begin(), l.end() - 2), Dims(r.begin(), r.end() - 2));
    Dims lt = batch, rt = batch;
    lt.insert(lt.end(), l.end() - 2, l.end());
    rt.insert(rt.end(), r.end() - 2, r.end());
    lhs = b.broadcast_to(c.hint(".lhs"), lhs, lt);
    rhs = b.broadcast_to(c.hint(".rhs"), rhs, rt);
    DotDims d;
    d.lhs_batch.resize(batch.size());
    std::iota(d.lhs_batch.begin(), d.lhs_batch.end(), 0);
    d.rhs_batch = d.lhs_batch;
    d.lhs_contracting = {static_cast<std::int64_t>(batch.size() + 1)};
    d.rhs_contracting = {static_cast<std::int64_t>(batch.size())};
    out = b.dot(c.hint(), lhs, rhs, d);
  }
  if (vector_lhs || vector_rhs) {
    Dims dims = b.dims(out);
    if (vector_rhs) dims.pop_back();
    if (vector_lhs) dims.erase(dims.end() - 1 - (vector_rhs ? 0 : 1));
    out = b.reshape(c.hint(), out, dims);
  }
  c.set_output(0, out);
}

}  // namespace

void add_linear_ops(TranslationTable& t) {
  t["Conv"] = conv;
  t["Gemm"] = gemm;
  t["MatMul"] = matmul;
}

}  // namespace perftune::frontend
