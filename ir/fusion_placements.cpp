#include "ir/fusion_placements.h"

#include <map>
#include <tuple>

#include "ir/knob_roles.h"

namespace perftune {

namespace {

using EdgeName = std::tuple<std::string, std::string, int>;  // producer, consumer, operand position

EdgeName edge_name(const Program& program, const Edge& edge) {
  return {program.op(edge.producer).name, program.op(edge.consumer).name, edge.operand_index};
}

}  // namespace

Config with_program_placements(const Kernel& kernel, const SearchSpace& kernel_space, const Config& base,
                               const Program& program, const SearchSpace& program_space, const Config& program_config) {
  const std::vector<KnobInfo> kernel_roles = knob_roles(kernel_space);
  const Program& body = kernel.body();
  std::vector<std::pair<std::size_t, EdgeName>> kernel_edges;  // knob position, the edge it places
  for (std::size_t k = 0; k < kernel_roles.size(); ++k)
    if (kernel_roles[k].role == KnobRole::kFuse && kernel_roles[k].index < body.edges().size())
      kernel_edges.emplace_back(k, edge_name(body, body.edges()[kernel_roles[k].index]));
  if (kernel_edges.empty()) return base;
  std::map<EdgeName, std::int64_t> placed;
  const std::vector<KnobInfo> program_roles = knob_roles(program_space);
  for (std::size_t k = 0; k < program_roles.size() && k < program_config.values.size(); ++k)
    if (program_roles[k].role == KnobRole::kFuse && program_roles[k].index < program.edges().size())
      placed[edge_name(program, program.edges()[program_roles[k].index])] = program_config.values[k];
  Config config = base;
  for (const auto& [k, edge] : kernel_edges)
    if (const auto it = placed.find(edge); it != placed.end()) config.values[k] = it->second;
  return kernel_space.contains(config) ? config : base;
}

}  // namespace perftune
