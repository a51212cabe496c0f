#include "ir/knob_roles.h"

#include <charconv>

namespace perftune {

namespace {
std::optional<std::size_t> parse_suffix(const std::string& name, const std::string& prefix) {
  if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix) != 0) return std::nullopt;
  std::size_t value = 0;
  const char* begin = name.data() + prefix.size();
  const char* end = name.data() + name.size();
  const auto [ptr, error] = std::from_chars(begin, end, value);
  if (error != std::errc() || ptr != end) return std::nullopt;
  return value;
}
}  // namespace

std::string tile_out_knob(std::size_t dimension) { return "tile.out." + std::to_string(dimension); }
std::string fuse_knob(std::size_t edge) { return "fuse." + std::to_string(edge); }

std::size_t rows_dim(std::size_t rank, std::size_t vector_dim, std::int64_t chosen) {
  if (chosen >= 0) return static_cast<std::size_t>(chosen);
  return vector_dim + 1 == rank ? rank - 2 : rank - 1;
}

KnobInfo knob_role(const std::string& name) {
  if (name == kTileReductionKnob) return {KnobRole::kTileReduction, 0};
  if (auto d = parse_suffix(name, "tile.out.")) return {KnobRole::kTileOut, *d};
  if (auto e = parse_suffix(name, "fuse.")) return {KnobRole::kFuse, *e};
  return {KnobRole::kGeneric, 0};
}

std::vector<KnobInfo> knob_roles(const SearchSpace& space) {
  std::vector<KnobInfo> roles;
  for (const Knob& knob : space.knobs()) roles.push_back(knob_role(knob.name));
  return roles;
}

bool is_fusion_space(const SearchSpace& space) {
  const auto& knobs = space.knobs();
  bool fused = false;
  for (const Knob& knob : knobs) {
    if (knob_role(knob.name).role == KnobRole::kFuse) fused = true;
    else if (knob.name != kStagesKnob) return false;
  }
  return fused;
}

TileChoice read_tiles(const std::vector<KnobInfo>& roles, const Config& config, std::size_t output_rank) {
  TileChoice choice;
  choice.out.assign(output_rank, 0);
  for (std::size_t k = 0; k < roles.size() && k < config.values.size(); ++k) {
    switch (roles[k].role) {
      case KnobRole::kTileOut:
        if (roles[k].index < output_rank) choice.out[roles[k].index] = config.values[k];
        break;
      case KnobRole::kTileReduction: choice.reduction = config.values[k]; break;
      case KnobRole::kFuse:
        if (config.values[k] != 0) choice.fused_edges.push_back(roles[k].index);
        break;
      case KnobRole::kGeneric: break;
    }
  }
  return choice;
}

}  // namespace perftune
