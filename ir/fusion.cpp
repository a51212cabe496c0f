#include "ir/fusion.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <queue>
#include <set>

namespace perftune {

namespace {

struct UnionFind {
  std::vector<std::size_t> parent;
  explicit UnionFind(std::size_t n) : parent(n) { std::iota(parent.begin(), parent.end(), 0); }
  std::size_t find(std::size_t x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
  }
  void unite(std::size_t a, std::size_t b) { parent[find(a)] = find(b); }
};

void check_length(const Program& program, const FusionConfig& config) {
  if (config.fused.size() != program.edges().size())
    throw FusionError("fusion config of program '" + program.name() + "' has " +
                      std::to_string(config.fused.size()) + " flags; expected one per edge (" +
                      std::to_string(program.edges().size()) + ")");
}

// Order of groups consistent with the data dependences; nullopt on a cycle.
std::optional<std::vector<int>> group_order(const Program& program, const std::vector<int>& groups,
                                            int group_count) {
  std::vector<std::set<int>> successors(group_count);
  std::vector<int> pending(group_count, 0);
  for (const Edge& e : program.edges()) {
    const int from = groups[e.producer], to = groups[e.consumer];
    if (from < 0 || to < 0 || from == to) continue;
    if (successors[from].insert(to).second) ++pending[to];
  }
  std::priority_queue<int, std::vector<int>, std::greater<>> ready;
  for (int g = 0; g < group_count; ++g)
    if (pending[g] == 0) ready.push(g);
  std::vector<int> order;
  while (!ready.empty()) {
    const int g = ready.top();
    ready.pop();
    order.push_back(g);
    for (int next : successors[g])
      if (--pending[next] == 0) ready.push(next);
  }
  if (static_cast<int>(order.size()) != group_count) return std::nullopt;
  return order;
}

int count_groups(const std::vector<int>& groups) {
  int count = 0;
  for (int g : groups) count = std::max(count, g + 1);
  return count;
}

}  // namespace

bool is_elementwise_opcode(const std::string& opcode) {
  static const std::set<std::string> kElementwise = {
      "abs",     "add",      "and",     "cbrt",     "ceil",    "clamp",    "compare", "convert",
      "cosine",  "divide",   "exponential", "exponential-minus-one", "floor", "log", "log-plus-one",
      "logistic", "maximum", "minimum", "multiply", "negate",  "not",      "or",      "power",
      "remainder", "round-nearest-afz", "rsqrt", "select", "sign", "sine", "sqrt", "subtract",
      "tanh",    "xor",      "erf",     "gelu",     "relu",    "sigmoid"};
  return kElementwise.count(opcode) > 0;
}

FusionConfig FusionConfig::none(const Program& program) {
  return FusionConfig{std::vector<bool>(program.edges().size(), false)};
}

FusionConfig FusionConfig::greedy_elementwise(const Program& program) {
  FusionConfig config = none(program);
  const auto& edges = program.edges();
  for (std::size_t i = 0; i < edges.size(); ++i) {
    if (!is_fusible(program, edges[i]) || !is_elementwise_opcode(program.op(edges[i].consumer).opcode))
      continue;
    config.fused[i] = true;
    if (!is_legal(program, config)) config.fused[i] = false;
  }
  return config;
}

bool is_fusible(const Program& program, const Edge& edge) {
  return !program.op(edge.producer).is_leaf_value() && !program.op(edge.consumer).is_leaf_value();
}

std::vector<std::size_t> fusible_edges(const Program& program) {
  std::vector<std::size_t> ids;
  for (std::size_t i = 0; i < program.edges().size(); ++i)
    if (is_fusible(program, program.edges()[i])) ids.push_back(i);
  return ids;
}

std::vector<int> fusion_groups(const Program& program, const FusionConfig& config) {
  check_length(program, config);
  UnionFind sets(program.size());
  const auto& edges = program.edges();
  for (std::size_t i = 0; i < edges.size(); ++i) {
    if (!config.fused[i]) continue;
    if (!is_fusible(program, edges[i]))
      throw FusionError("edge " + std::to_string(i) + " of program '" + program.name() +
                        "' starts or ends at a parameter and cannot be fused");
    sets.unite(edges[i].producer, edges[i].consumer);
  }
  // Number groups in op order so equal configs give equal numbering.
  std::vector<int> groups(program.size(), -1);
  std::map<std::size_t, int> number_of_root;
  for (OpId id = 0; id < program.size(); ++id) {
    if (program.op(id).is_leaf_value()) continue;
    const auto [it, inserted] = number_of_root.emplace(sets.find(id), static_cast<int>(number_of_root.size()));
    groups[id] = it->second;
  }
  return groups;
}

std::optional<std::vector<int>> fusion_group_order(const Program& program, const std::vector<int>& groups) {
  return group_order(program, groups, count_groups(groups));
}

std::optional<std::string> fusion_cycle(const Program& program, const std::vector<int>& groups) {
  if (group_order(program, groups, count_groups(groups))) return std::nullopt;
  return "the fused groups of program '" + program.name() +
         "' depend on each other in a cycle (a value leaves a fused group and comes back into it)";
}

bool is_legal(const Program& program, const FusionConfig& config) {
  try {
    const auto groups = fusion_groups(program, config);
    return group_order(program, groups, count_groups(groups)).has_value();
  } catch (const FusionError&) {
    return false;
  }
}

FusedKernel fused_kernel(const Program& program, const std::vector<int>& groups, std::vector<OpId> members) {
  FusedKernel fused;
  fused.members = std::move(members);
  const int g = groups[fused.members.front()];
  Program body;
  std::map<OpId, OpId> local;  // program op -> kernel body op
  for (OpId id : fused.members) {
    std::vector<OpId> operands;
    for (OpId producer : program.operands(id)) {
      if (groups[producer] != g && !local.count(producer) && program.op(producer).is_leaf_value() && !program.op(producer).is_parameter()) {
        local[producer] = body.add_op(program.op(producer));  // copied into every kernel that reads it, as XLA does
      } else if (groups[producer] != g && !local.count(producer)) {
        Op parameter;
        parameter.name = program.op(producer).name;
        parameter.opcode = "parameter";
        parameter.shape = program.op(producer).shape;
        parameter.parameter_number = static_cast<std::int64_t>(fused.inputs.size());
        local[producer] = body.add_op(std::move(parameter));
        fused.inputs.push_back(producer);
      }
      operands.push_back(local.at(producer));
    }
    local[id] = body.add_op(program.op(id), operands);
  }
  for (OpId id : fused.members) {
    const auto users = program.users(id);
    const bool escapes = users.empty() ||
                         std::any_of(users.begin(), users.end(), [&](OpId u) { return groups[u] != g; });
    if (escapes) fused.outputs.push_back(id);
  }
  const std::string& last = program.op(fused.members.back()).name;
  body.set_name(fused.members.size() > 1 ? "fusion." + last : last);
  const std::string kernel_name = body.name();
  fused.kernel = Kernel(kernel_name, std::move(body));
  return fused;
}

FusionPlan partition(const Program& program, const FusionConfig& config) {
  const std::vector<int> groups = fusion_groups(program, config);
  const int group_count = count_groups(groups);
  const auto order = group_order(program, groups, group_count);
  if (!order) throw FusionError(*fusion_cycle(program, groups));

  std::vector<std::vector<OpId>> members(group_count);
  for (OpId id : program.topological_order()) {
    if (groups[id] >= 0) members[groups[id]].push_back(id);
  }

  FusionPlan plan;
  plan.kernel_of_op.assign(program.size(), -1);
  for (int g : *order) {
    FusedKernel fused = fused_kernel(program, groups, std::move(members[g]));
    for (OpId id : fused.members) plan.kernel_of_op[id] = static_cast<int>(plan.kernels.size());
    plan.kernels.push_back(std::move(fused));
  }
  return plan;
}

}  // namespace perftune
