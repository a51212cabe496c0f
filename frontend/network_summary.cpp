#include "frontend/network_summary.h"

#include <set>
#include <sstream>

#include "ir/fusion.h"

namespace perftune::frontend {

namespace {

// Multiply-adds of a dot or convolution: each output element sums over the contracted dims.
double multiply_adds(const Program& program, OpId id) {
  const Op& op = program.op(id);
  const auto operands = program.operands(id);
  double per_output = 1;
  if (op.opcode == "dot" && op.dot && !operands.empty()) {
    for (std::int64_t d : op.dot->lhs_contracting) per_output *= static_cast<double>(program.op(operands[0]).shape.dims[static_cast<std::size_t>(d)]);
  } else if (op.opcode == "convolution" && op.convolution && operands.size() == 2) {
    const auto& kernel = program.op(operands[1]).shape.dims;
    per_output = static_cast<double>(kernel[static_cast<std::size_t>(op.convolution->kernel_input_feature)]);
    for (std::int64_t d : op.convolution->kernel_spatial) per_output *= static_cast<double>(kernel[static_cast<std::size_t>(d)]);
  } else {
    return 0;
  }
  return per_output * static_cast<double>(op.shape.element_count());
}

}  // namespace

NetworkSummary summarize_network(const ImportedNetwork& network, double import_seconds) {
  NetworkSummary s;
  const Program& program = network.program;
  s.name = program.name();
  s.opset = network.opset;
  s.onnx_nodes = network.onnx_nodes;
  s.folded_nodes = network.folded_nodes;
  s.op_types = network.op_types;
  s.import_seconds = import_seconds;
  for (OpId id = 0; id < program.size(); ++id) {
    const Op& op = program.op(id);
    if (op.weight) {
      ++s.weights;
      s.weight_elements += op.shape.element_count();
    }
    if (!op.is_leaf_value()) ++s.ops;
    s.gflop += 2 * multiply_adds(program, id) / 1e9;
  }
  const FusionPlan plan = partition(program, FusionConfig::greedy_elementwise(program));
  std::set<std::string> keys;
  for (const FusedKernel& k : plan.kernels) keys.insert(k.kernel.key());
  s.kernels = static_cast<std::int64_t>(plan.kernels.size());
  s.unique_kernels = static_cast<std::int64_t>(keys.size());
  return s;
}

nlohmann::ordered_json to_json(const NetworkSummary& s) {
  return {{"name", s.name},           {"opset", s.opset},     {"onnx_nodes", s.onnx_nodes}, {"folded_nodes", s.folded_nodes},
          {"ops", s.ops},             {"weights", s.weights}, {"weight_elements", s.weight_elements},
          {"kernels", s.kernels},     {"unique_kernels", s.unique_kernels}, {"gflop", s.gflop},
          {"import_seconds", s.import_seconds}, {"op_types", s.op_types}};
}

std::string summary_text(const NetworkSummary& s) {
  std::ostringstream out;
  out << s.name << " (ONNX, opset " << s.opset << ")\n"
      << "  ONNX nodes " << s.onnx_nodes << " (" << s.folded_nodes << " folded at import), IR ops " << s.ops << ", weights " << s.weights << " ("
      << s.weight_elements << " values)\n"
      << "  kernels after greedy fusion " << s.kernels << ", unique " << s.unique_kernels << ", " << s.gflop << " GFLOP in dots and convolutions\n"
      << "  import " << s.import_seconds << " s\n  op types:";
  for (const auto& [op, n] : s.op_types) out << " " << op << " " << n;
  out << "\n";
  return out.str();
}

}  // namespace perftune::frontend
