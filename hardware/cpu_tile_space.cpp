#include "hardware/cpu_tile_space.h"

#include <algorithm>

#include "hardware/op_semantics.h"
#include "ir/fusion.h"

namespace perftune {

namespace {
constexpr std::int64_t kDefaultRowTile = 16;
constexpr std::int64_t kDefaultColumnTile = 128;
constexpr std::int64_t kDefaultReductionTile = 128;
}  // namespace

std::vector<std::int64_t> tile_values(std::int64_t extent) {
  std::vector<std::int64_t> values;
  for (std::int64_t v = 1; v < extent; v *= 2) values.push_back(v);
  values.push_back(std::max<std::int64_t>(extent, 1));
  return values;
}

std::optional<OpId> accumulated_reduction(const Program& program, OpId root, const std::vector<bool>& inlined) {
  const auto& dims = program.op(root).shape.dims;
  std::vector<OpId> pending = {root};
  while (!pending.empty()) {
    const OpId id = pending.back();
    pending.pop_back();
    const Op& op = program.op(id);
    if (is_reduction_opcode(op.opcode)) {
      if (op.shape.dims == dims) return id;
      continue;
    }
    if (!is_elementwise_opcode(op.opcode)) continue;
    const auto operands = program.operands(id);
    for (auto it = operands.rbegin(); it != operands.rend(); ++it)
      if (inlined[*it]) pending.push_back(*it);
  }
  return std::nullopt;
}

SearchSpace cpu_tile_space(const Kernel& kernel) {
  const Program& body = kernel.body();
  const OpId root = body.root();
  std::vector<bool> inlined(body.size(), true);
  for (OpId id : body.outputs()) inlined[id] = false;
  for (OpId id = 0; id < body.size(); ++id)
    if (body.op(id).is_parameter()) inlined[id] = false;
  const auto& dims = body.op(root).shape.dims;
  std::vector<Knob> knobs;
  for (std::size_t d = 0; d < dims.size(); ++d) knobs.push_back({tile_out_knob(d), tile_values(dims[d])});
  const auto reduction = accumulated_reduction(body, root, inlined);
  if (reduction) knobs.push_back({kTileReductionKnob, tile_values(reduction_form(body, *reduction).extent())});
  if (knobs.empty()) knobs.push_back({tile_out_knob(0), {1}});
  if (!reduction || dims.empty()) return SearchSpace(std::move(knobs));
  const std::size_t rank = dims.size();
  return SearchSpace(std::move(knobs), [rank](const Config& config) {
    std::int64_t points = 1;
    for (std::size_t d = 0; d < rank; ++d) points *= config.values[d];
    return points <= kMaxAccumulatorElements;
  });
}

TileChoice default_tiles(const Program& program, OpId root, std::optional<std::int64_t> reduction_extent) {
  const auto& dims = program.op(root).shape.dims;
  TileChoice choice;
  for (std::size_t d = 0; d < dims.size(); ++d) {
    const std::int64_t wanted = d + 1 == dims.size() ? kDefaultColumnTile : (d + 2 == dims.size() ? kDefaultRowTile : 1);
    choice.out.push_back(std::min(wanted, std::max<std::int64_t>(dims[d], 1)));
  }
  if (reduction_extent) choice.reduction = std::min(kDefaultReductionTile, std::max<std::int64_t>(*reduction_extent, 1));
  return choice;
}

Config default_tile_config(const Kernel& kernel, const SearchSpace& space) {
  const Program& body = kernel.body();
  std::vector<bool> inlined(body.size(), true);
  for (OpId id : body.outputs()) inlined[id] = false;
  const auto reduction = accumulated_reduction(body, body.root(), inlined);
  std::optional<std::int64_t> extent;
  if (reduction) extent = reduction_form(body, *reduction).extent();
  const TileChoice tiles = default_tiles(body, body.root(), extent);
  Config config;
  for (const Knob& knob : space.knobs()) {
    const KnobInfo info = knob_role(knob.name);
    std::int64_t wanted = knob.values.back();
    if (info.role == KnobRole::kTileOut && info.index < tiles.out.size()) wanted = tiles.out[info.index];
    if (info.role == KnobRole::kTileReduction && tiles.reduction) wanted = *tiles.reduction;
    std::int64_t chosen = knob.values.front();
    for (std::int64_t v : knob.values)
      if (v <= wanted) chosen = v;
    config.values.push_back(chosen);
  }
  return config;
}

}  // namespace perftune
