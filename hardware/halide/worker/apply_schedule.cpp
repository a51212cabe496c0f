#include "hardware/halide/worker/apply_schedule.h"

#include <algorithm>
#include <string>

#include "hardware/reference/op_semantics.h"
#include "ir/knob_roles.h"

namespace perftune::halide {

namespace {

using Halide::Var;
using Halide::VarOrRVar;

std::int64_t at_most(std::int64_t factor, std::int64_t extent) { return std::max<std::int64_t>(1, std::min(factor, extent)); }

// The loops of one tiled stage that other Funcs are computed at.
struct TileLoops {
  Halide::LoopLevel tile = Halide::LoopLevel::root();            // the innermost tile loop
  Halide::LoopLevel register_block = Halide::LoopLevel::root();  // just outside the lanes and rows
};

// Loop variables, inside a tile or a register block: lanes (vectorized, along program dimension
// `lanes_dim`), unrolled rows (along rows_dim(rank, lanes_dim, rows_choice)), the reduction (its first dimension split by the
// reduction tile: rki inside, rko outside the points; rki outside the other reduction dimensions,
// or inside them with `first_reduction_inner`), then the remaining points, the lanes' blocks
// innermost. Returns the loops innermost first, without rko, which it appends to
// `outermost` so the caller places it.
std::vector<VarOrRVar> point_loops(Halide::Stage s, const std::vector<std::int64_t>& extents, const std::vector<Var>& dims,
                                   int vector, std::size_t lanes_dim, int rows_choice, int unroll, const std::vector<Halide::RVar>& rvars,
                                   std::int64_t reduction_extent, std::int64_t reduction_tile, bool first_reduction_inner, const std::string& tag,
                                   std::vector<VarOrRVar>& outermost, Var& block, Halide::TailStrategy tail) {
  const std::size_t rank = dims.size();
  std::vector<VarOrRVar> inner;
  std::vector<VarOrRVar> points;
  for (std::size_t d = 0; d < rank; ++d) points.push_back(dims[d]);  // program order
  if (rank >= 1) {
    const std::int64_t lanes = at_most(vector, extents[lanes_dim]);
    if (lanes > 1) {
      Var outer(tag + "vb"), lane(tag + "v");
      s.split(dims[lanes_dim], outer, lane, static_cast<int>(lanes), tail).vectorize(lane);
      inner.push_back(lane);
      points[lanes_dim] = outer;
    }
    block = points[lanes_dim].var;
  }
  if (rank >= 2) {
    const std::size_t rows_at = rows_dim(rank, lanes_dim, rows_choice);
    const std::int64_t rows = at_most(unroll, extents[rows_at]);
    if (rows > 1) {
      Var outer(tag + "ub"), row(tag + "u");
      s.split(dims[rows_at], outer, row, static_cast<int>(rows), tail).unroll(row);
      inner.push_back(row);
      points[rows_at] = outer;
    }
  }
  if (!rvars.empty()) {
    Halide::RVar first = rvars.front();
    if (reduction_tile > 0 && reduction_tile < reduction_extent) {
      Halide::RVar ko(tag + "ko"), ki(tag + "ki");
      s.split(first, ko, ki, static_cast<int>(reduction_tile));
      outermost.push_back(ko);
      first = ki;
    }
    if (first_reduction_inner) inner.push_back(first);
    for (std::size_t k = rvars.size(); k-- > 1;) inner.push_back(rvars[k]);
    if (!first_reduction_inner) inner.push_back(first);
  }
  if (rank >= 1) inner.push_back(points[lanes_dim]);
  for (std::size_t d = rank; d-- > 0;)
    if (d != lanes_dim) inner.push_back(points[d]);
  return inner;
}

// An output reduction accumulated in a buffer of its own: the pure stage that writes the output.
Halide::Func output_stage(Halide::Func reduction, OpId id, std::size_t rank) {
  Halide::Func out("op" + std::to_string(id) + "_out");
  std::vector<Var> halide_vars;
  for (std::size_t h = 0; h < rank; ++h) halide_vars.push_back(dimension_var(rank, rank - 1 - h));
  out(halide_vars) = reduction(std::vector<Halide::Expr>(halide_vars.begin(), halide_vars.end()));
  return out;
}

bool wrapped_reduction(const Program& body, const HalideSchedule& schedule, OpId id) {
  return is_reduction_opcode(body.op(id).opcode) && schedule.stages.count(id) && schedule.stages.at(id).accumulator != Placement::kRoot;
}

class Scheduler {
 public:
  Scheduler(LoweredKernel& lowered, const Program& body, const HalideSchedule& schedule)
      : lowered_(lowered), body_(body), schedule_(schedule) {}

  ScheduledPipeline run() {
    for (auto& [id, packed] : lowered_.panels) pack(packed, id);
    std::map<OpId, Halide::Func> output_func;
    for (const auto& [id, stage] : schedule_.stages) output_func[id] = schedule_stage(id, stage);
    ScheduledPipeline result;
    for (OpId id : lowered_.outputs) result.outputs.push_back(output_func.count(id) ? output_func[id] : lowered_.funcs[id]);
    result.pipeline = Halide::Pipeline(result.outputs);
    return result;
  }

 private:
  bool is_output(OpId id) const { return std::find(lowered_.outputs.begin(), lowered_.outputs.end(), id) != lowered_.outputs.end(); }
  const std::vector<std::int64_t>& dims(OpId id) const { return body_.op(id).shape.dims; }
  std::vector<Var> vars(OpId id) const {
    std::vector<Var> v;
    for (std::size_t d = 0; d < dims(id).size(); ++d) v.push_back(dimension_var(dims(id).size(), d));
    return v;
  }
  std::int64_t reduction_extent(OpId id) const {
    const ReductionForm form = reduction_form(body_, id);
    return form.red_sizes.empty() ? 1 : form.red_sizes.front();
  }
  const std::vector<Halide::RVar>& rvars(OpId id) const { return lowered_.rvars.at(id); }

  // One definition of a stage at root: tile loops outside (optionally the two innermost swapped,
  // the outermost one or two parallel), the point loops of point_loops() inside.
  TileLoops tile(Halide::Func f, Halide::Stage s, OpId id, const StageSchedule& stage, bool update, const std::string& tag) {
    const auto& extents = dims(id);
    const std::size_t rank = extents.size();
    // An update's pure loops would otherwise round up (Halide's default there), computing past
    // the buffer and reading past the inputs; a pure definition shifts its last tile inwards.
    const Halide::TailStrategy tail = update ? Halide::TailStrategy::GuardWithIf : Halide::TailStrategy::Auto;
    TileLoops loops;
    std::vector<Var> outer, inner;
    for (std::size_t d = 0; d < rank; ++d) {
      outer.emplace_back(tag + "o" + std::to_string(d));
      inner.emplace_back(tag + "i" + std::to_string(d));
      s.split(dimension_var(rank, d), outer[d], inner[d], static_cast<int>(at_most(stage.tiles[d], extents[d])), tail);
    }
    std::vector<std::int64_t> tile_extents;
    for (std::size_t d = 0; d < rank; ++d) tile_extents.push_back(at_most(stage.tiles[d], extents[d]));
    std::vector<VarOrRVar> outside;
    Var block;
    std::vector<VarOrRVar> order =
        point_loops(s, tile_extents, inner, stage.vector, lanes_dim(stage, rank), stage.rows_dim, stage.unroll,
                    update ? rvars(id) : std::vector<Halide::RVar>{},
                    update ? reduction_extent(id) : 1, stage.reduction_tile, stage.reduction_order == 1, tag, outside, block, tail);
    order.insert(order.end(), outside.begin(), outside.end());
    std::vector<Var> tiles(outer.rbegin(), outer.rend());  // innermost first
    if (stage.order == 1 && tiles.size() >= 2) std::swap(tiles[0], tiles[1]);
    order.insert(order.end(), tiles.begin(), tiles.end());
    if (!order.empty()) s.reorder(order);
    if (stage.parallel == 2 && tiles.size() >= 2) {
      Var fused(tag + "par");
      s.fuse(tiles[tiles.size() - 2], tiles.back(), fused).parallel(fused);
      tiles.pop_back();
      tiles.back() = fused;
    } else if (stage.parallel >= 1 && !tiles.empty()) {
      s.parallel(tiles.back());
    }
    if (rank > 0) {
      loops.tile = Halide::LoopLevel(f, tiles.front());
      loops.register_block = Halide::LoopLevel(f, block);
    }
    return loops;
  }

  Halide::Func schedule_stage(OpId id, const StageSchedule& stage) {
    Halide::Func target = lowered_.funcs[id];
    const bool reduction = is_reduction_opcode(body_.op(id).opcode);
    const bool wrapped = reduction && stage.accumulator != Placement::kRoot;
    Halide::Func out = target;
    if (wrapped) {
      if (is_output(id)) {
        out = output_stage(target, id, dims(id).size());
      } else {
        out = target.in();
      }
    }
    out.compute_root();
    // Computed over its whole shape, not just the region its consumers read (a stride-2
    // consumer reads rows 0..30 of 32): a tile wider than that region would otherwise shift
    // inwards past row 0 and read before the start of its inputs.
    for (std::size_t d = 0; d < dims(id).size(); ++d) out.bound(dimension_var(dims(id).size(), d), 0, static_cast<int>(dims(id)[d]));
    const std::string tag = "s" + std::to_string(id) + "_";
    TileLoops loops = tile(out, out, id, stage, false, tag);
    if (reduction && !wrapped) place_padding(id, tile(target, target.update(), id, stage, true, tag).tile, stage.vector);
    if (wrapped) {
      const Halide::LoopLevel accumulator_block = accumulate(target, id, stage, lanes_dim(stage, dims(id).size()), stage.rows_dim,
                                                             stage.accumulator == Placement::kInline ? loops.register_block : loops.tile, tag + "a_");
      place_padding(id, loops.tile, stage.vector);
      // Accumulated per tile, the reduction runs register blocks of its own inside the tile, and
      // those read the group's members: the output stage's blocks enclose no use of them.
      if (stage.accumulator == Placement::kTile && !dims(id).empty()) loops.register_block = accumulator_block;
    }
    // The group's members computed inside this stage's loops.
    for (OpId member = 0; member < body_.size(); ++member) {
      if (member == id || body_.op(member).is_leaf_value() || schedule_.group_root[member] != id) continue;
      const Placement p = schedule_.placement[member];
      Halide::Func f = lowered_.funcs[member];
      if (is_reduction_opcode(body_.op(member).opcode)) {
        // A member of another shape than the stage's runs its lanes along its own innermost dimension.
        const bool same_shape = dims(member) == dims(id);
        const std::size_t lanes = same_shape ? lanes_dim(stage, dims(id).size()) : lanes_dim(StageSchedule{}, dims(member).size());
        accumulate(f, member, stage, lanes, same_shape ? stage.rows_dim : -1, p == Placement::kInline ? loops.register_block : loops.tile, "m" + std::to_string(member) + "_");
        place_padding(member, loops.tile, stage.vector);
      } else if (p == Placement::kTile) {
        f.compute_at(loops.tile);
        if (!dims(member).empty()) {
          const std::int64_t lanes = at_most(stage.vector, dims(member).back());
          // Guarded: the region computed per tile may be narrower than the lanes, and a rounded-up
          // region would read past the producer's own inputs.
          if (lanes > 1)
            f.vectorize(dimension_var(dims(member).size(), dims(member).size() - 1), static_cast<int>(lanes), Halide::TailStrategy::GuardWithIf);
        }
      }
    }
    return out;
  }

  // A packed panel operand: copied once at root, a panel's lanes as one vector, panels in
  // parallel when the stage that reads them is parallel.
  void pack(Halide::Func packed, OpId reduction) {
    packed.compute_root();
    const std::vector<Var> args = packed.args();  // lane first, panel last
    const auto lanes = schedule_.panels.at(reduction).lanes;
    if (lanes > 1) packed.vectorize(args.front(), lanes, Halide::TailStrategy::GuardWithIf);
    const OpId reader = schedule_.group_root[reduction] == kSeveralGroups ? body_.root() : schedule_.group_root[reduction];
    if (schedule_.stages.count(reader) && schedule_.stages.at(reader).parallel > 0) packed.parallel(args.back());
  }

  // The padded inputs of reduction `id` (a boundary condition Func each) where the schedule puts
  // them: computed once per `tile` (a bounds check per element of the tile's halo instead of per
  // load), as a padded copy at root, or left inlined.
  void place_padding(OpId id, const Halide::LoopLevel& tile, int vector) {
    const auto it = lowered_.padded.find(id);
    if (it == lowered_.padded.end() || schedule_.padding == Placement::kInline) return;
    for (Halide::Func f : it->second) {
      const std::vector<Var> args = f.args();  // innermost first
      if (schedule_.padding == Placement::kRoot) {
        f.compute_root();
        if (args.size() > 1) f.parallel(args.back());
      } else {
        f.compute_at(tile);
      }
      if (vector > 1) f.vectorize(args.front(), vector, Halide::TailStrategy::GuardWithIf);
    }
  }

  // A reduction computed inside another stage's loops, its update as a register-blocked nest, its
  // lanes along `lanes_dim`, its rows along `rows_choice` (rows_dim()). Returns the loop of that
  // nest just outside its lanes and rows (its register block).
  Halide::LoopLevel accumulate(Halide::Func f, OpId id, const StageSchedule& stage, std::size_t lanes_dim, int rows_choice,
                               const Halide::LoopLevel& level, const std::string& tag) {
    f.compute_at(level);
    const auto& extents = dims(id);
    if (!extents.empty()) {
      const std::int64_t lanes = at_most(stage.vector, extents[lanes_dim]);
      if (lanes > 1) f.vectorize(dimension_var(extents.size(), lanes_dim), static_cast<int>(lanes));
      // Stored with the lanes innermost, so a block's accumulators are whole vectors (in the
      // output's order a vector along channels would be a gather and a scatter per update).
      if (lanes_dim + 1 != extents.size()) {
        std::vector<Var> storage = {dimension_var(extents.size(), lanes_dim)};
        for (std::size_t d = extents.size(); d-- > 0;)
          if (d != lanes_dim) storage.push_back(dimension_var(extents.size(), d));
        f.reorder_storage(storage);
      }
    }
    Halide::Stage update = f.update();
    std::vector<VarOrRVar> outside;
    Var block;
    std::vector<VarOrRVar> order = point_loops(update, extents, vars(id), stage.vector, lanes_dim, rows_choice, stage.unroll, rvars(id),
                                               reduction_extent(id), stage.reduction_tile, stage.reduction_order == 1, tag, outside, block,
                                               Halide::TailStrategy::GuardWithIf);
    order.insert(order.end(), outside.begin(), outside.end());
    if (!order.empty()) update.reorder(order);
    return extents.empty() ? level : Halide::LoopLevel(f, block);
  }

  LoweredKernel& lowered_;
  const Program& body_;
  const HalideSchedule& schedule_;
};

}  // namespace

ScheduledPipeline apply_schedule(LoweredKernel& lowered, const Program& body, const HalideSchedule& schedule) {
  return Scheduler(lowered, body, schedule).run();
}

ScheduledPipeline schedule_algorithm(LoweredKernel& lowered, const Program& body, const HalideSchedule& schedule) {
  ScheduledPipeline result;
  for (OpId id : lowered.outputs)
    result.outputs.push_back(wrapped_reduction(body, schedule, id) ? output_stage(lowered.funcs[id], id, body.op(id).shape.dims.size())
                                                                   : lowered.funcs[id]);
  result.pipeline = Halide::Pipeline(result.outputs);
  return result;
}

ScheduledPipeline unscheduled_pipeline(LoweredKernel& lowered, const Program& body) {
  // As a Halide user writes a reduction: a pure output stage over the accumulating Func, which
  // gives the autoschedulers a stage to tile and a place to compute the accumulator.
  ScheduledPipeline result;
  for (OpId id : lowered.outputs) {
    Halide::Func f = lowered.funcs[id];
    if (is_reduction_opcode(body.op(id).opcode)) f = output_stage(f, id, body.op(id).shape.dims.size());
    result.outputs.push_back(f);
  }
  result.pipeline = Halide::Pipeline(result.outputs);
  return result;
}

}  // namespace perftune::halide
