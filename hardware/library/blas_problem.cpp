#include "hardware/library/blas_problem.h"

#include <algorithm>
#include <set>

namespace perftune {

namespace {

std::int64_t product(const std::vector<std::int64_t>& dims, const std::vector<std::int64_t>& which) {
  std::int64_t p = 1;
  for (std::int64_t d : which) p *= dims.at(static_cast<std::size_t>(d));
  return p;
}

std::vector<std::int64_t> other_dims(std::size_t rank, const std::vector<std::int64_t>& a, const std::vector<std::int64_t>& b) {
  std::vector<std::int64_t> rest;
  for (std::int64_t d = 0; d < static_cast<std::int64_t>(rank); ++d)
    if (std::find(a.begin(), a.end(), d) == a.end() && std::find(b.begin(), b.end(), d) == b.end()) rest.push_back(d);
  return rest;
}

std::string dims_text(const std::vector<std::int64_t>& dims) {
  std::string text = "[";
  for (std::size_t i = 0; i < dims.size(); ++i) text += (i ? "x" : "") + std::to_string(dims[i]);
  return text + "]";
}

struct Call {
  std::string library, text;
  nlohmann::json request;
};

std::optional<Call> gemm(const Program& body, OpId id) {
  const Op& op = body.op(id);
  const auto operands = body.operands(id);
  if (!op.dot || operands.size() != 2) return std::nullopt;
  const auto& lhs = body.op(operands[0]).shape.dims;
  const auto& rhs = body.op(operands[1]).shape.dims;
  const DotDims& d = *op.dot;
  const std::int64_t batch = product(lhs, d.lhs_batch), k = product(lhs, d.lhs_contracting);
  const std::int64_t m = product(lhs, other_dims(lhs.size(), d.lhs_batch, d.lhs_contracting));
  const std::int64_t n = product(rhs, other_dims(rhs.size(), d.rhs_batch, d.rhs_contracting));
  const std::vector<std::int64_t> a = batch > 1 ? std::vector{batch, m, k} : std::vector{m, k};
  const std::vector<std::int64_t> b = batch > 1 ? std::vector{batch, k, n} : std::vector{k, n};
  return Call{"OpenBLAS", std::string(batch > 1 ? "torch::bmm " : "torch::mm ") + dims_text(a) + "x" + dims_text(b),
              {{"kind", "gemm"}, {"batch", batch}, {"m", m}, {"k", k}, {"n", n}}};
}

std::optional<Call> conv(const Program& body, OpId id) {
  const Op& op = body.op(id);
  const auto operands = body.operands(id);
  if (!op.convolution || !op.window || operands.size() != 2) return std::nullopt;
  const ConvolutionDims& c = *op.convolution;
  const Window& w = *op.window;
  const auto& in = body.op(operands[0]).shape.dims;
  const auto& kernel = body.op(operands[1]).shape.dims;
  const std::size_t spatial = c.input_spatial.size();
  if (spatial < 1 || spatial > 3 || c.kernel_spatial.size() != spatial || w.size.size() != spatial) return std::nullopt;
  const auto at = [](const std::vector<std::int64_t>& dims, std::int64_t d) { return dims.at(static_cast<std::size_t>(d)); };
  // Feature groups (depthwise, grouped) are torch's `groups`; the kernel's input features are per group.
  const std::int64_t groups = std::max<std::int64_t>(1, c.feature_group_count);
  if (at(in, c.input_feature) != at(kernel, c.kernel_input_feature) * groups) return std::nullopt;
  std::vector<std::int64_t> input = {at(in, c.input_batch), at(in, c.input_feature)};
  std::vector<std::int64_t> weight = {at(kernel, c.kernel_output_feature), at(kernel, c.kernel_input_feature)};
  std::vector<std::int64_t> stride, padding, dilation;
  for (std::size_t s = 0; s < spatial; ++s) {
    const auto value = [&](const std::vector<std::int64_t>& v, std::int64_t fallback) { return v.empty() ? fallback : v.at(s); };
    if (value(w.base_dilation, 1) != 1) return std::nullopt;
    const std::int64_t low = value(w.pad_low, 0), high = value(w.pad_high, 0);
    // Symmetric padding is the library's own; asymmetric padding is applied to the input beforehand.
    const bool symmetric = low == high && low >= 0;
    input.push_back(at(in, c.input_spatial[s]) + (symmetric ? 0 : low + high));
    padding.push_back(symmetric ? low : 0);
    weight.push_back(at(kernel, c.kernel_spatial[s]));
    stride.push_back(value(w.stride, 1));
    dilation.push_back(value(w.window_dilation, 1));
  }
  nlohmann::json request = {{"kind", "conv"}, {"input", input}, {"weight", weight}, {"stride", stride}, {"padding", padding}, {"dilation", dilation}};
  if (groups > 1) request["groups"] = groups;
  return Call{"oneDNN", "torch::conv" + std::to_string(spatial) + "d " + dims_text(input) + " * " + dims_text(weight) +
                            (groups > 1 ? ", " + std::to_string(groups) + " groups" : ""),
              request};
}

}  // namespace

std::optional<BlasProblem> blas_problem(const Kernel& kernel) {
  std::vector<Call> calls;
  for (OpId id = 0; id < kernel.body().size(); ++id) {
    const std::string& opcode = kernel.body().op(id).opcode;
    if (opcode != "dot" && opcode != "convolution") continue;
    std::optional<Call> call = opcode == "dot" ? gemm(kernel.body(), id) : conv(kernel.body(), id);
    if (!call) return std::nullopt;  // a library would not take the kernel as it is
    calls.push_back(std::move(*call));
  }
  if (calls.empty()) return std::nullopt;
  BlasProblem problem;
  std::set<std::string> libraries;
  for (const Call& call : calls) {
    libraries.insert(call.library);
    problem.calls += (problem.calls.empty() ? "" : ", ") + call.text;
    problem.request.push_back(call.request);
  }
  if (calls.size() > 1) problem.calls = std::to_string(calls.size()) + " calls: " + problem.calls;
  for (const std::string& library : libraries) problem.library += (problem.library.empty() ? "" : "+") + library;
  return problem;
}

}  // namespace perftune
