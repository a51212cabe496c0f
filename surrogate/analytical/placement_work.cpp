#include "surrogate/analytical/placement_work.h"

#include <algorithm>

#include "surrogate/analytical/op_cost.h"

namespace perftune {

namespace {

constexpr std::int64_t kInline = 1;  // hardware/halide/halide_schedule.h, Placement::kInline

// How many elements of an operand one output element of `op` reads.
double reads_per_element(const Op& op, const std::vector<const Shape*>& operands) {
  if (op.opcode == "dot" || op.opcode == "convolution") return static_cast<double>(contraction_size(op, operands));
  const double elements = std::max<double>(1.0, static_cast<double>(op.shape.element_count()));
  if (op.opcode == "reduce" && !operands.empty()) return std::max(1.0, static_cast<double>(operands.front()->element_count()) / elements);
  if (op.opcode == "reduce-window") return std::max(1.0, op_cost(op, operands).flops / elements);
  return 1.0;
}

}  // namespace

PlacementWork placement_work(const Program& body, const std::vector<KnobInfo>& roles, const Config& config) {
  const auto& edges = body.edges();
  std::vector<std::int64_t> placement(edges.size(), 0);
  for (std::size_t k = 0; k < roles.size() && k < config.values.size(); ++k)
    if (roles[k].role == KnobRole::kFuse && roles[k].index < edges.size()) placement[roles[k].index] = config.values[k];

  const std::size_t n = body.size();
  std::vector<double> elements(n), flops_per_element(n), reads(n);
  for (OpId id = 0; id < n; ++id) {
    const Op& op = body.op(id);
    std::vector<const Shape*> operands;
    for (OpId operand : body.operands(id)) operands.push_back(&body.op(operand).shape);
    elements[id] = static_cast<double>(op.shape.element_count());
    flops_per_element[id] = elements[id] > 0 ? op_cost(op, operands).flops / elements[id] : 0.0;
    reads[id] = reads_per_element(op, operands);
  }
  std::vector<std::vector<std::size_t>> consumers_of(n);  // edge indices by producer
  for (std::size_t e = 0; e < edges.size(); ++e) consumers_of[edges[e].producer].push_back(e);

  // Consumers before producers (ops are stored operands first): how often each op is evaluated.
  PlacementWork work;
  std::vector<double> evaluations(n, 0.0);
  double flops = 0.0, once = 0.0;
  for (OpId id = n; id-- > 0;) {
    const Op& op = body.op(id);
    bool stored = consumers_of[id].empty();  // an output is computed once, in full
    double inlined = 0.0;
    for (std::size_t e : consumers_of[id]) {
      if (placement[e] == kInline) inlined += evaluations[edges[e].consumer] * reads[edges[e].consumer];
      else stored = true;
    }
    evaluations[id] = (stored ? elements[id] : 0.0) + inlined;
    if (op.is_parameter()) continue;
    flops += evaluations[id] * flops_per_element[id];
    once += elements[id] * flops_per_element[id];
    bool at_root = false;
    for (std::size_t e : consumers_of[id]) at_root = at_root || placement[e] == 0;
    if (at_root) work.root_bytes += 2.0 * static_cast<double>(op.shape.byte_size());
  }
  if (once > 0) work.recompute = std::max(1.0, flops / once);
  return work;
}

}  // namespace perftune
