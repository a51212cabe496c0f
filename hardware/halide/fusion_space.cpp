#include "hardware/halide/fusion_space.h"

#include <algorithm>
#include <map>
#include <stdexcept>

#include "hardware/reference/op_semantics.h"
#include "ir/knob_roles.h"

namespace perftune {

bool is_cpu_fusible(const Program& program, const FusionConfig& config) {
  if (!is_legal(program, config)) return false;
  const auto& edges = program.edges();
  for (std::size_t e = 0; e < edges.size(); ++e) {
    if (!config.fused[e]) continue;
    if (is_reduction_opcode(program.op(edges[e].producer).opcode) &&
        !is_elementwise_opcode(program.op(edges[e].consumer).opcode))
      return false;
  }
  std::map<int, int> reductions_in_group;
  const auto groups = fusion_groups(program, config);
  for (OpId id = 0; id < program.size(); ++id)
    if (groups[id] >= 0 && is_reduction_opcode(program.op(id).opcode) && ++reductions_in_group[groups[id]] > 1)
      return false;
  return true;
}

FusionConfig greedy_cpu_fusion(const Program& program) {
  const FusionConfig greedy = FusionConfig::greedy_elementwise(program);
  // Edge by edge, in program order, each kept when the partition stays one the backend runs: a
  // residual add joins one of its two convolutions, not both, and every later edge still fuses.
  FusionConfig kept = FusionConfig::none(program);
  for (std::size_t e = 0; e < greedy.fused.size(); ++e) {
    if (!greedy.fused[e]) continue;
    kept.fused[e] = true;
    if (!is_cpu_fusible(program, kept)) kept.fused[e] = false;
  }
  return kept;
}

std::vector<std::size_t> cpu_fusible_edges(const Program& program) {
  std::vector<std::size_t> edges;
  for (std::size_t e : fusible_edges(program)) {
    const Edge& edge = program.edges()[e];
    if (is_reduction_opcode(program.op(edge.producer).opcode) && !is_elementwise_opcode(program.op(edge.consumer).opcode))
      continue;
    edges.push_back(e);
  }
  return edges;
}

SearchSpace fusion_space(const Program& program, FusionChoices choices) {
  const auto edges = cpu_fusible_edges(program);
  if (edges.empty())
    throw std::invalid_argument("program '" + program.name() + "' has no fusible edge (every edge starts at a parameter)");
  std::vector<Knob> knobs;
  const std::vector<std::int64_t> values = choices == FusionChoices::kPlacements ? std::vector<std::int64_t>{0, 1, 2} : std::vector<std::int64_t>{0, 1};
  for (std::size_t e : edges) knobs.push_back({fuse_knob(e), values});
  // Placements run on the Halide backend, whose groups get the kernel heuristic's schedule.
  if (choices == FusionChoices::kPlacements) knobs.push_back({kStagesKnob, {1}});
  // The constraint holds its own copy: a space may outlive the program it was made from.
  auto copy = std::make_shared<const Program>(program);
  auto edge_ids = std::make_shared<const std::vector<std::size_t>>(edges);
  return SearchSpace(std::move(knobs), [copy, edge_ids](const Config& config) {
    FusionConfig fusion = FusionConfig::none(*copy);
    for (std::size_t k = 0; k < edge_ids->size(); ++k) fusion.fused[(*edge_ids)[k]] = config.values[k] != 0;
    return is_cpu_fusible(*copy, fusion);
  });
}

FusionConfig fusion_config_of(const Program& program, const SearchSpace& space, const Config& config) {
  FusionConfig fusion = FusionConfig::none(program);
  const TileChoice choice = read_tiles(knob_roles(space), config, 0);
  for (std::size_t e : choice.fused_edges) {
    if (e >= fusion.fused.size())
      throw std::invalid_argument("knob " + fuse_knob(e) + " names no edge of program '" + program.name() + "'");
    fusion.fused[e] = true;
  }
  return fusion;
}

Config fusion_space_config(const Program& program, const SearchSpace& space, const FusionConfig& fusion) {
  Config config;
  for (const Knob& knob : space.knobs()) {
    const KnobInfo info = knob_role(knob.name);
    if (info.role != KnobRole::kFuse) config.values.push_back(knob.values.back());  // `stages`: its one value
    else config.values.push_back(info.index < fusion.fused.size() && fusion.fused[info.index] ? 1 : 0);
  }
  return config;
}

FusionConfig network_fusion(const Program& program) {
  FusionConfig fusion = greedy_cpu_fusion(program);
  // A kernel writes out only its ops without users inside it (Kernel::outputs): an op another
  // kernel also reads is cut from its users inside its kernel, until none is left.
  const auto& edges = program.edges();
  for (bool changed = true; changed;) {
    changed = false;
    const std::vector<int> groups = fusion_groups(program, fusion);
    for (std::size_t e = 0; e < edges.size(); ++e) {
      if (!fusion.fused[e]) continue;
      const OpId producer = edges[e].producer;
      const auto users = program.users(producer);
      if (std::any_of(users.begin(), users.end(), [&](OpId user) { return groups[user] != groups[producer]; })) {
        fusion.fused[e] = false;
        changed = true;
      }
    }
  }
  return fusion;
}

std::optional<FusionPlan> network_partition(const Program& program) {
  const FusionConfig fusion = network_fusion(program);
  if (!is_cpu_fusible(program, fusion)) return std::nullopt;
  return partition(program, fusion);
}

std::vector<Program> network_blocks(const Program& program, const FusionPlan& plan, std::size_t kernels_per_block) {
  if (kernels_per_block == 0) throw std::invalid_argument("network_blocks: kernels_per_block must be at least 1");
  std::vector<Program> blocks;
  for (std::size_t first = 0; first < plan.kernels.size(); first += kernels_per_block) {
    const std::size_t end = std::min(plan.kernels.size(), first + kernels_per_block);
    // fused_kernel() makes one group a program: the block is group 0, every other op outside it.
    std::vector<int> groups(program.size(), 1);
    for (std::size_t k = first; k < end; ++k)
      for (OpId id : plan.kernels[k].members) groups[id] = 0;
    std::vector<OpId> members;
    for (OpId id : program.topological_order())
      if (groups[id] == 0) members.push_back(id);
    Program block = fused_kernel(program, groups, std::move(members)).kernel.body();
    block.set_name(program.name() + "/block." + std::to_string(blocks.size()));
    blocks.push_back(std::move(block));
  }
  return blocks;
}

}  // namespace perftune
