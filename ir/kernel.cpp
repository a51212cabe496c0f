#include "ir/kernel.h"

#include <algorithm>
#include <cstdint>
#include <map>

#include "ir/stable_hash.h"

namespace perftune {

namespace {

void append_list(std::string& out, const char* label, const std::vector<std::int64_t>& values) {
  if (values.empty()) return;
  out += label;
  out += '=';
  for (std::size_t i = 0; i < values.size(); ++i) out += (i ? "," : "") + std::to_string(values[i]);
  out += ';';
}

// Everything about an op that decides what it computes, without its name or position.
std::string op_signature(const Op& op) {
  std::string out = op.opcode + ' ' + op.shape.to_string() + ' ';
  append_list(out, "dims", op.dimensions);
  if (op.window) {
    const Window& w = *op.window;
    append_list(out, "ws", w.size);
    append_list(out, "st", w.stride);
    append_list(out, "pl", w.pad_low);
    append_list(out, "ph", w.pad_high);
    append_list(out, "wd", w.window_dilation);
    append_list(out, "bd", w.base_dilation);
  }
  if (op.convolution) {
    const ConvolutionDims& c = *op.convolution;
    append_list(out, "ci", {c.input_batch, c.input_feature});
    append_list(out, "cis", c.input_spatial);
    append_list(out, "ck", {c.kernel_input_feature, c.kernel_output_feature});
    append_list(out, "cks", c.kernel_spatial);
    append_list(out, "co", {c.output_batch, c.output_feature});
    append_list(out, "cos", c.output_spatial);
    if (c.feature_group_count != 1) out += "fg=" + std::to_string(c.feature_group_count) + ';';  // old keys unchanged
  }
  if (op.dot) {
    append_list(out, "lc", op.dot->lhs_contracting);
    append_list(out, "rc", op.dot->rhs_contracting);
    append_list(out, "lb", op.dot->lhs_batch);
    append_list(out, "rb", op.dot->rhs_batch);
  }
  if (op.slice) {
    append_list(out, "ss", op.slice->start);
    append_list(out, "sst", op.slice->stride);
  }
  if (op.padding) {
    append_list(out, "pdl", op.padding->low);
    append_list(out, "pdh", op.padding->high);
  }
  append_list(out, "idx", op.indices);
  if (op.is_constant() && op.literal)
    out += "lit=" + stable_hash_hex(std::string_view(reinterpret_cast<const char*>(op.literal->data()), op.literal->size() * sizeof(float))) + ';';
  if (op.parameter_number >= 0) out += "p=" + std::to_string(op.parameter_number) + ';';
  if (!op.fusion_kind.empty()) out += "fk=" + op.fusion_kind + ';';
  for (const auto& callee : op.called)
    if (callee) out += "call=" + content_key(*callee) + ';';
  return out;
}

}  // namespace

std::string canonical_text(const Program& program) {
  const std::size_t n = program.size();
  std::vector<std::string> signature(n);
  for (OpId id = 0; id < n; ++id) signature[id] = op_signature(program.op(id));
  // Kahn's algorithm with ties broken by signature, so insertion order matters only between
  // ops that are indistinguishable anyway.
  std::vector<std::size_t> pending(n);
  for (OpId id = 0; id < n; ++id) pending[id] = program.operands(id).size();
  std::multimap<std::string, OpId> ready;
  for (OpId id = 0; id < n; ++id)
    if (pending[id] == 0) ready.emplace(signature[id], id);
  std::vector<std::int64_t> canonical_index(n, -1);
  std::string text;
  std::int64_t next = 0;
  while (!ready.empty()) {
    const OpId id = ready.begin()->second;
    ready.erase(ready.begin());
    canonical_index[id] = next++;
    text += signature[id] + "(";
    for (OpId operand : program.operands(id)) text += std::to_string(canonical_index[operand]) + ",";
    text += ")\n";
    for (OpId user : program.users(id)) {
      // users() is distinct; an op used twice by the same user has two edges.
      const auto operands = program.operands(user);
      const auto uses = std::count(operands.begin(), operands.end(), id);
      pending[user] -= static_cast<std::size_t>(uses);
      if (pending[user] == 0) ready.emplace(signature[user], user);
    }
  }
  return text;
}

std::string content_key(const Program& program) { return stable_hash_hex(canonical_text(program)); }

Kernel::Kernel(std::string name, Program body) : name_(std::move(name)), body_(std::move(body)) {
  body_.check_acyclic();
  key_ = content_key(body_);
}

Kernel Kernel::opaque(std::string name, std::string key) {
  Kernel kernel;
  kernel.name_ = std::move(name);
  kernel.body_.set_name(kernel.name_);
  kernel.key_ = std::move(key);
  return kernel;
}

std::vector<OpId> Kernel::parameters() const {
  std::vector<OpId> params;
  for (OpId id = 0; id < body_.size(); ++id)
    if (body_.op(id).is_parameter()) params.push_back(id);
  std::stable_sort(params.begin(), params.end(), [&](OpId a, OpId b) {
    return body_.op(a).parameter_number < body_.op(b).parameter_number;
  });
  return params;
}

}  // namespace perftune
