#include "hardware/halide/halide_schedule.h"

#include <algorithm>
#include <set>
#include <stdexcept>

#include "hardware/reference/op_semantics.h"
#include "ir/fusion.h"
#include "ir/knob_roles.h"

namespace perftune {

namespace {

constexpr const char* kAccumulateKnob = "accumulate";
constexpr const char* kPadKnob = "pad";
constexpr const char* kPackKnob = "pack";
constexpr const char* kReductionOrderKnob = "reduction.order";
constexpr std::int64_t kNoPack = 0;  // knob pack: 0 = operands read in place, 1 = panels packed

// Vector widths in f32 lanes: SSE (4), AVX2 (8), AVX-512 (16), and two AVX-512 registers (32,
// the width of a GEMM micro-kernel row); Halide splits a vector wider than the machine's.
const std::vector<std::int64_t> kVectorWidths = {1, 4, 8, 16, 32};
// 6: the rows of a micro-kernel of two AVX2 vectors per row (12 of the 16 registers accumulate).
const std::vector<std::int64_t> kUnrollFactors = {1, 2, 4, 6, 8};
// Tiles the heuristic cuts the outermost dimension outside its register block into: tasks for a
// few threads at a time.
constexpr std::int64_t kParallelTiles = 8;
// An elementwise kernel of fewer outputs runs on one thread: on the training networks' kernels one
// thread was as fast or faster below this size and slower above about twice it.
constexpr std::int64_t kSerialBelowElements = 1 << 15;
// f32 lanes of one vector register of this host. The tuner and its Halide worker run on one
// machine, so the heuristic sizes its register block for it, as Halide's natural_vector_size does.
std::int64_t host_register_lanes() { return __builtin_cpu_supports("avx512f") ? 16 : 8; }

// Powers of two below `extent`, then `extent` itself (one tile); {1} for extent <= 1.
std::vector<std::int64_t> powers_up_to(std::int64_t extent) {
  std::vector<std::int64_t> values;
  for (std::int64_t v = 1; v < extent; v *= 2) values.push_back(v);
  values.push_back(std::max<std::int64_t>(extent, 1));
  return values;
}

std::int64_t first_reduction_extent(const Program& body, OpId id) {
  const ReductionForm form = reduction_form(body, id);
  return form.red_sizes.empty() ? 1 : form.red_sizes.front();
}

// The reduction the root stage accumulates: the root itself, or one reached from it through
// elementwise ops with the root's dimensions (XLA's output fusion). -1 if none.
long accumulated_reduction_of(const Program& body, OpId root) {
  const auto& dims = body.op(root).shape.dims;
  std::vector<OpId> pending = {root};
  while (!pending.empty()) {
    const OpId id = pending.back();
    pending.pop_back();
    const Op& op = body.op(id);
    if (is_reduction_opcode(op.opcode)) return op.shape.dims == dims ? static_cast<long>(id) : -1;
    if (!is_elementwise_opcode(op.opcode)) continue;
    for (OpId operand : body.operands(id))
      if (body.op(operand).shape.dims == dims) pending.push_back(operand);
  }
  return -1;
}

// Reduction dimensions of more than one point (a 1x1 window's do not move).
std::size_t moving_reduction_dims(const Program& body, OpId reduction) {
  const auto sizes = reduction_form(body, reduction).red_sizes;
  return static_cast<std::size_t>(std::count_if(sizes.begin(), sizes.end(), [](std::int64_t n) { return n > 1; }));
}

std::int64_t knob_or(const std::map<std::string, std::int64_t>& knobs, const std::string& name, std::int64_t fallback) {
  const auto it = knobs.find(name);
  return it == knobs.end() ? fallback : it->second;
}

void check_range(const std::string& name, std::int64_t value, std::int64_t low, std::int64_t high) {
  if (value < low || value > high)
    throw std::invalid_argument("knob " + name + " = " + std::to_string(value) + " is outside [" + std::to_string(low) + ", " +
                                std::to_string(high) + "]");
}

int depth(Placement p) { return p == Placement::kRoot ? 0 : p == Placement::kTile ? 1 : 2; }

// The (reduction, operand) pairs where a reduction reads its operand through padding (knob `pad`).
std::set<std::pair<OpId, OpId>> padded_reads(const Program& body) {
  std::set<std::pair<OpId, OpId>> reads;
  for (OpId id = 0; id < body.size(); ++id) {
    if (!is_reduction_opcode(body.op(id).opcode)) continue;
    const auto checked = reduction_form(body, id).bounds_checked;
    const auto operands = body.operands(id);
    for (std::size_t k = 0; k < checked.size() && k < operands.size(); ++k)
      if (checked[k]) reads.insert({id, operands[k]});
  }
  return reads;
}

// The accumulated reduction of the root when it has a panel operand under lanes along output
// dimension `lanes`, else -1.
long packable_reduction_of(const Program& body, std::size_t lanes) {
  const long accumulated = accumulated_reduction_of(body, body.root());
  return accumulated >= 0 && panel_operand(body, static_cast<OpId>(accumulated), lanes) ? accumulated : -1;
}

// The output dimensions of stage `id` that its lanes may run along (vector_dims() of a root).
std::vector<std::int64_t> lane_dims_of(const Program& body, OpId id) {
  const std::size_t rank = body.op(id).shape.dims.size();
  if (rank == 0) return {};
  std::vector<std::int64_t> dims;
  const long accumulated = accumulated_reduction_of(body, id);
  for (std::size_t d = 0; d + 1 < rank && accumulated >= 0; ++d) {
    if (body.op(id).shape.dims[d] < 2) continue;  // one point: no lanes to run
    const auto panel = panel_operand(body, static_cast<OpId>(accumulated), d);
    if (!panel) continue;
    const ReductionForm form = reduction_form(body, static_cast<OpId>(accumulated));
    bool others_broadcast = true;
    for (std::size_t s = 0; s < form.operands.size(); ++s)
      for (const AffineIndex& a : form.operands[s])
        if (s != panel->slot && a.out_dim == static_cast<int>(d)) others_broadcast = false;
    if (others_broadcast) dims.push_back(static_cast<std::int64_t>(d));
  }
  dims.push_back(static_cast<std::int64_t>(rank - 1));
  return dims;
}

// A pointwise convolution (its input read in place along the width: a 1x1 window at stride 1) on
// an AVX-512 host, at least two vectors wide: its output channels, along which the heuristic runs
// the register block's rows, the lanes along the width. That is a GEMM's micro-kernel over the
// width: each input vector feeds every row's accumulator and the weights are broadcast, where
// lanes along the channels load the input once per lane group and rows along the height read
// each input row again for every channel. None for other stages.
std::optional<std::size_t> heuristic_channel_rows(const Program& body, OpId id) {
  const auto& dims = body.op(id).shape.dims;
  const long accumulated = accumulated_reduction_of(body, id);
  if (dims.size() < 3 || accumulated < 0 || host_register_lanes() < 16 || dims.back() < 32) return std::nullopt;
  const Op& reduction = body.op(static_cast<OpId>(accumulated));
  if (!reduction.convolution || !panel_operand(body, static_cast<OpId>(accumulated), dims.size() - 1)) return std::nullopt;
  const auto channels = static_cast<std::int64_t>(reduction.convolution->output_feature);
  const auto candidates = lane_dims_of(body, id);  // the weights along the channels: a broadcast per row
  if (std::find(candidates.begin(), candidates.end(), channels) == candidates.end() || channels + 1 == static_cast<std::int64_t>(dims.size()))
    return std::nullopt;
  return static_cast<std::size_t>(channels);
}

// The heuristic's lanes: along a convolution's output channels where they are a lane dimension
// of whole vectors of 8 and at least 16 of them (and heuristic_channel_rows() runs no rows along
// them), else innermost. Even few channels along the lanes beat lanes along the width with rows
// along the height, which leave the channels outside the register block: each input row is then
// read again from L2 for every output channel.
std::size_t heuristic_lanes_dim(const Program& body, OpId id) {
  const std::size_t rank = body.op(id).shape.dims.size();
  const long accumulated = accumulated_reduction_of(body, id);
  if (rank == 0 || accumulated < 0) return rank == 0 ? 0 : rank - 1;
  const Op& reduction = body.op(static_cast<OpId>(accumulated));
  if (!reduction.convolution || heuristic_channel_rows(body, id)) return rank - 1;
  const auto channels = static_cast<std::size_t>(reduction.convolution->output_feature);
  const auto candidates = lane_dims_of(body, id);
  const bool lane = std::find(candidates.begin(), candidates.end(), static_cast<std::int64_t>(channels)) != candidates.end();
  const std::int64_t extent = body.op(id).shape.dims[channels];
  return lane && extent % 8 == 0 && extent >= 16 ? channels : rank - 1;
}

// The reduction that stage `id` of a scheduled program accumulates in its own loops: itself, or a
// member of its group reached through elementwise members of its shape (accumulated_reduction_of
// within the group). -1 if none.
long group_reduction_of(const Program& body, const HalideSchedule& schedule, OpId id) {
  const auto& dims = body.op(id).shape.dims;
  std::vector<OpId> pending = {id};
  while (!pending.empty()) {
    const OpId at = pending.back();
    pending.pop_back();
    const Op& op = body.op(at);
    if (is_reduction_opcode(op.opcode)) return op.shape.dims == dims ? static_cast<long>(at) : -1;
    if (!is_elementwise_opcode(op.opcode)) continue;
    for (OpId operand : body.operands(at)) {
      const Op& producer = body.op(operand);
      if (!producer.is_leaf_value() && producer.shape.dims == dims && schedule.placement[operand] != Placement::kRoot &&
          schedule.group_root[operand] == id)
        pending.push_back(operand);
    }
  }
  return -1;
}

bool has_reduction(const Program& body) {
  for (OpId id = 0; id < body.size(); ++id)
    if (is_reduction_opcode(body.op(id).opcode)) return true;
  return false;
}

// Whether stage `id` accumulates a plain reduction (one operand, no product: a sum, a maximum)
// that reduces its operand's innermost dimension: a global pool over an NCHW image, a softmax's or
// a LayerNorm's sums along a row. Lanes along the output would then read the operand a whole
// reduction apart, a gather per lane, where one scalar accumulator per output reads its reduction
// contiguously; on the training corpora's kernels of this form the fastest measured schedules are
// mostly scalar, and the vectorized micro-kernel is the slowest of the heuristics' choices.
bool reduces_innermost(const Program& body, OpId id) {
  const long accumulated = accumulated_reduction_of(body, id);
  if (accumulated < 0) return false;
  const ReductionForm form = reduction_form(body, static_cast<OpId>(accumulated));
  if (form.product || form.operands.size() != 1 || form.operands.front().empty()) return false;
  const AffineIndex& innermost = form.operands.front().back();
  return innermost.out_dim < 0 && innermost.red_dim >= 0 && form.red_sizes[static_cast<std::size_t>(innermost.red_dim)] > 1;
}

}  // namespace

std::optional<PanelOperand> panel_operand(const Program& body, OpId reduction, std::optional<std::size_t> lane_dim) {
  if (!is_reduction_opcode(body.op(reduction).opcode)) return std::nullopt;
  const std::size_t rank = body.op(reduction).shape.dims.size();
  if (rank == 0 || (lane_dim && *lane_dim >= rank)) return std::nullopt;
  const ReductionForm form = reduction_form(body, reduction);
  const auto lanes = static_cast<int>(lane_dim.value_or(rank - 1));
  for (std::size_t s = 0; s < form.operands.size(); ++s) {
    if (form.bounds_checked[s]) continue;
    const auto& index = form.operands[s];
    const auto reads = [&](auto predicate) { return std::count_if(index.begin(), index.end(), predicate); };
    // A reduction dimension of extent 1 (a 1x1 window) moves no index.
    const auto moves = [&](int red_dim) { return red_dim >= 0 && form.red_sizes[static_cast<std::size_t>(red_dim)] > 1; };
    const auto pure_lane = std::find_if(index.begin(), index.end(), [&](const AffineIndex& a) {
      return a.out_dim == lanes && !moves(a.red_dim) && a.out_scale == 1 && a.out_divisor == 1 && a.offset == 0;
    });
    const bool lanes_once = reads([&](const AffineIndex& a) { return a.out_dim == lanes; }) == 1;
    const bool reduced = reads([&](const AffineIndex& a) { return moves(a.red_dim); }) > 0;
    if (pure_lane != index.end() && lanes_once && reduced)
      return PanelOperand{s, static_cast<std::size_t>(pure_lane - index.begin())};
  }
  return std::nullopt;
}

std::vector<std::int64_t> vector_dims(const Program& body) { return lane_dims_of(body, body.root()); }

std::size_t lanes_dim(const StageSchedule& stage, std::size_t rank) {
  return stage.vector_dim >= 0 ? static_cast<std::size_t>(stage.vector_dim) : rank == 0 ? 0 : rank - 1;
}

std::vector<OpId> computed_outputs(const Program& body) {
  std::vector<OpId> outputs;
  for (OpId id : body.outputs())
    if (!body.op(id).is_parameter()) outputs.push_back(id);
  return outputs;
}

std::optional<std::int64_t> absent_knob_value(const std::string& name) {
  if (name == kRowsDimKnob) return StageSchedule{}.rows_dim;
  if (name == kReductionOrderKnob) return StageSchedule{}.reduction_order;
  if (name == kPackKnob) return kNoPack;
  return std::nullopt;
}

SearchSpace space_within_knobs(const SearchSpace& space, const std::vector<std::string>& knob_names) {
  const std::set<std::string> kept(knob_names.begin(), knob_names.end());
  std::vector<Knob> knobs;
  std::vector<std::optional<std::int64_t>> held;  // per knob of `space`: its absent value where dropped
  for (const Knob& knob : space.knobs()) {
    if (kept.count(knob.name)) {
      knobs.push_back(knob);
      held.emplace_back();
      continue;
    }
    const auto absent = absent_knob_value(knob.name);
    if (!absent) throw std::invalid_argument("knob " + knob.name + " has no value its absence means");
    held.push_back(absent);
  }
  if (knobs.size() != kept.size()) throw std::invalid_argument("the knobs name one this space does not have");
  if (knobs.size() == space.knobs().size()) return space;
  return SearchSpace(std::move(knobs), [space, held](const Config& config) {
    Config whole;
    for (std::size_t k = 0, taken = 0; k < held.size(); ++k)
      whole.values.push_back(held[k] ? *held[k] : config.values[taken++]);
    return space.contains(whole);
  });
}

bool is_halide_schedule_knob(const std::string& name) {
  const KnobRole role = knob_role(name).role;
  return role != KnobRole::kGeneric || name == kVectorKnob || name == kUnrollKnob || name == kParallelKnob ||
         name == kOrderKnob || name == kStagesKnob || name == kAccumulateKnob || name == kPadKnob || name == kPackKnob || name == kVectorDimKnob ||
         name == kRowsDimKnob || name == kReductionOrderKnob;
}

namespace {

StageSchedule micro_kernel_stage(const Program& body, OpId id) {
  // A library-style micro-kernel (OpenBLAS's and Halide's apps/linear_algebra's shape), the
  // reduction whole inside its register block: with AVX-512, 8 rows by two vectors of 16 lanes (16
  // accumulators: two FMA pipes of a 4-cycle latency keep 8 busy, and 6 rows of one vector left
  // half of them waiting), in tiles of 32 rows (four blocks) by 256 lanes (a GEMM's tile is one
  // block, at the end); with AVX2 (or columns that 32 lanes do not tile whole), 6 rows by 16 lanes
  // (12 of AVX2's 16 registers), in tiles of 24 rows. Along output channels (oneDNN's direct convolution) a tile is one block of channels
  // by the whole width, the width as the rows: 32 channels where they tile the channels whole, else
  // 16 (8 where 16 do not), by up to 8 rows with AVX-512 and 6 with AVX2. A pointwise convolution
  // of heuristic_channel_rows() is a GEMM's block instead: 8 rows of output channels by two vectors
  // along the whole width, in tiles of 32 channels.
  // Outside the register dimensions, the outermost dimension of more than one point is split into
  // 8 tiles and the rest are whole, and the two outermost tile loops are one parallel loop (at
  // batch 1 the outermost alone has a single iteration): tasks for the threads, each reusing its
  // operands across a share of that dimension.
  // A kernel with a panel operand reads it packed (knob `pack`, heuristic_packs()).
  const std::vector<std::int64_t>& dims = body.op(id).shape.dims;
  StageSchedule s;
  const std::size_t rank = dims.size();
  s.tiles = dims;
  s.reduction_tile = is_reduction_opcode(body.op(id).opcode) ? first_reduction_extent(body, id) : 1;
  s.accumulator = Placement::kInline;
  if (rank == 0) return s;
  const std::size_t lanes = heuristic_lanes_dim(body, id);
  const bool channels = lanes + 1 != rank;
  s.vector_dim = channels ? static_cast<int>(lanes) : -1;
  const std::optional<std::size_t> channel_rows = heuristic_channel_rows(body, id);
  if (channel_rows) s.rows_dim = static_cast<int>(*channel_rows);
  // Two vectors per row only where they tile the lanes whole, so the panels still pack: a GEMM's
  // column tile, or every block of 32 output channels; a pointwise convolution's input is read in
  // place, its last block of columns shifting inwards.
  const bool wide_block = host_register_lanes() >= 16 && (channel_rows || (channels ? dims[lanes] % 32 == 0 : std::min<std::int64_t>(dims[lanes], 256) % 32 == 0));
  const std::int64_t channel_block = wide_block ? 32 : dims[lanes] % 16 == 0 ? 16 : 8;
  s.tiles[lanes] = std::min<std::int64_t>(dims[lanes], channels ? channel_block : 256);
  for (std::int64_t w : kVectorWidths)
    if (w <= std::min<std::int64_t>(wide_block ? 32 : 16, s.tiles[lanes])) s.vector = static_cast<int>(w);
  s.parallel = rank >= 2 ? 2 : 1;
  if (rank < 2) return s;
  const std::size_t rows = rows_dim(rank, lanes, s.rows_dim);
  if (!channels) s.tiles[rows] = std::min<std::int64_t>(dims[rows], wide_block ? 32 : 24);
  // Eight rows wherever AVX-512's 32 registers hold them: a block of one vector of channels then
  // still keeps 8 FMA chains in flight.
  const std::int64_t max_rows = host_register_lanes() >= 16 && (wide_block || channels) ? 8 : 6;
  for (std::int64_t u : kUnrollFactors)
    if (u <= std::min<std::int64_t>(max_rows, s.tiles[rows])) s.unroll = static_cast<int>(u);
  if (channels) {
    // Along a narrow width the rows' last block shifts inwards and recomputes: of the row counts
    // that fit, the one computing the fewest columns, the most rows among equals (7 columns: 4
    // rows compute 8, 6 rows 12). 6 rows and more keep the window outside the channels
    // (reduction.order 1): in the window's order the rows' broadcasts of successive window steps
    // overlap, and the compiler keeps every one live, spilling the accumulators.
    const auto computed = [&](std::int64_t u) { return (s.tiles[rows] + u - 1) / u * u; };
    for (std::int64_t u : {6, 4})
      if (u < s.unroll && computed(u) < computed(s.unroll)) s.unroll = static_cast<int>(u);
    s.reduction_order = s.unroll >= 6 ? 1 : 0;
  }
  for (std::size_t d = 0; d < rank; ++d)
    if (d != lanes && d != rows && dims[d] > 1) {
      s.tiles[d] = (dims[d] + kParallelTiles - 1) / kParallelTiles;
      break;
    }
  const long accumulated = accumulated_reduction_of(body, id);
  if (!channels && accumulated >= 0 && body.op(static_cast<OpId>(accumulated)).opcode == "dot") {
    // A GEMM's tile is its register block: the block's rows by two of its vectors. The column
    // tiles run outside the row tiles, and at rank 2 they alone are split among the threads when
    // there are enough of them, so each thread keeps its column panel of B in its own cache while
    // it walks every row tile (GotoBLAS's loop order; the tuned GEMMs of real shapes settle there).
    // Tiles are powers of two or whole (powers_up_to()): 6 rows take a tile of 8.
    std::int64_t block_rows = 1;
    while (block_rows < s.unroll) block_rows *= 2;
    s.tiles[rows] = std::min<std::int64_t>(dims[rows], block_rows);
    s.tiles[lanes] = std::min<std::int64_t>(dims[lanes], 2 * static_cast<std::int64_t>(s.vector));
    s.order = 1;
    if (rank == 2 && (dims[lanes] + s.tiles[lanes] - 1) / s.tiles[lanes] >= kParallelTiles) s.parallel = 1;
  }
  return s;
}

}  // namespace

StageSchedule heuristic_stage(const Program& body, OpId id) {
  StageSchedule s = micro_kernel_stage(body, id);
  if (reduces_innermost(body, id)) s.vector = s.unroll = 1;  // one accumulator per output
  if (!has_reduction(body)) {
    // Nothing accumulates, so unrolled rows hold no registers, only code; and a small output is
    // written in less time than the thread pool takes to start its tasks.
    s.unroll = 1;
    if (body.op(id).shape.element_count() < kSerialBelowElements) s.parallel = 0;
  }
  return s;
}

bool heuristic_packs(const Program& body) {  // where the tile allows; a pointwise convolution reads its input in place
  return !body.op(body.root()).shape.dims.empty() && !heuristic_channel_rows(body, body.root()) && !reduces_innermost(body, body.root()) &&
         packable_reduction_of(body, heuristic_lanes_dim(body, body.root())) >= 0;
}

namespace {

// What heuristic_config() adds to heuristic_stage() for a kernel, for stage `id` of a scheduled
// program: the reduction its group accumulates whole inside the register block, and that
// reduction's panel operand packed where the stage's lanes tile it in whole vectors and the operand
// is read at root (a parameter, or stored), the column tiles then outside the row tiles; not under
// rows along the output channels (heuristic_channel_rows(): the input is read in place).
void schedule_as_kernel(const Program& body, OpId id, StageSchedule& stage, HalideSchedule& schedule) {
  const long accumulated = group_reduction_of(body, schedule, id);
  if (accumulated < 0) return;
  const auto reduction = static_cast<OpId>(accumulated);
  stage.reduction_tile = first_reduction_extent(body, reduction);
  const std::size_t rank = stage.tiles.size();
  if (rank == 0 || stage.vector <= 1) return;
  const std::size_t lanes = lanes_dim(stage, rank);
  const auto panel = panel_operand(body, reduction, lanes);
  if (!panel || stage.rows_dim >= 0 || stage.tiles[lanes] % stage.vector != 0) return;
  if (schedule.placement[body.operands(reduction)[panel->slot]] != Placement::kRoot) return;  // parameters are too
  schedule.panels[reduction] = {stage.vector, lanes};
  stage.order = 1;
}

}  // namespace

HalideSchedule schedule_from_knobs(const Program& body, const std::map<std::string, std::int64_t>& knobs) {
  for (const auto& [name, value] : knobs)
    if (!is_halide_schedule_knob(name)) throw std::invalid_argument("unknown schedule knob " + name);
  const std::size_t n = body.size();
  const auto& edges = body.edges();
  HalideSchedule schedule;
  schedule.placement.assign(n, Placement::kRoot);
  schedule.group_root.resize(n);
  for (OpId id = 0; id < n; ++id) schedule.group_root[id] = id;

  // Padded inputs: per tile under the heuristic; inlined in a config from before the knob existed.
  const bool has_stage_knobs = knobs.count(tile_out_knob(0)) > 0;
  const auto padding = knob_or(knobs, kPadKnob, static_cast<std::int64_t>(has_stage_knobs ? Placement::kInline : Placement::kTile));
  check_range(kPadKnob, padding, 0, 2);
  schedule.padding = static_cast<Placement>(padding);
  // Operands read through a padded Func that the schedule places: they are read where that Func
  // is computed, not inside the reduction's loops.
  const auto placed_padding = schedule.padding != Placement::kInline ? padded_reads(body) : std::set<std::pair<OpId, OpId>>{};
  // A packed panel operand is read by its copy at root: a producer of it cannot sit deeper.
  const auto pack = knob_or(knobs, kPackKnob, kNoPack);
  check_range(kPackKnob, pack, 0, 1);
  const OpId root = body.root();
  const std::size_t root_rank = body.op(root).shape.dims.size();
  const std::size_t lanes = root_rank == 0 ? 0 : static_cast<std::size_t>(knob_or(knobs, kVectorDimKnob, static_cast<std::int64_t>(root_rank) - 1));
  const long packable = pack == 1 && root_rank > 0 ? packable_reduction_of(body, lanes) : -1;
  std::pair<OpId, OpId> packed_read = {kSeveralGroups, kSeveralGroups};
  if (packable >= 0) {
    const auto reduction = static_cast<OpId>(packable);
    packed_read = {reduction, body.operands(reduction)[panel_operand(body, reduction, lanes)->slot]};
  }

  // Placement: an op whose value leaves the kernel, or that any consumer reads unfused, is stored
  // at root; otherwise its first edge's choice. Consumers first (reverse topological order), so a
  // producer's level can be raised to what its consumers allow: read_depth is the deepest loop
  // level (0 root, 1 tile, 2 register block) that encloses every read of an op's value.
  const std::vector<OpId> order = body.topological_order();
  const auto outputs = body.outputs();
  std::vector<int> read_depth(n, 2);
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const OpId id = *it;
    if (body.op(id).is_leaf_value()) continue;
    if (std::find(outputs.begin(), outputs.end(), id) != outputs.end()) continue;
    Placement chosen = Placement::kRoot;
    bool first = true, stored = false;
    std::vector<OpId> consumers;
    for (std::size_t e = 0; e < edges.size(); ++e) {
      if (edges[e].producer != id) continue;
      const std::int64_t value = knob_or(knobs, fuse_knob(e), 0);
      check_range(fuse_knob(e), value, 0, 2);
      if (value == 0) stored = true;
      if (first) chosen = static_cast<Placement>(value);
      first = false;
      consumers.push_back(edges[e].consumer);
    }
    if (stored || consumers.empty()) continue;
    // Every consumer must sit in one group, and no consumer may be outside the loop the
    // producer would be computed in.
    const OpId group = schedule.group_root[consumers.front()];
    bool one_group = group != kSeveralGroups;
    int deepest_allowed = 2;
    for (OpId c : consumers) {
      one_group = one_group && schedule.group_root[c] == group;
      const Placement at = schedule.placement[c];
      int read = at == Placement::kRoot ? 2 : at == Placement::kInline && !is_reduction_opcode(body.op(c).opcode) ? read_depth[c] : depth(at);
      if (placed_padding.count({c, id})) read = std::min(read, depth(schedule.padding));
      if (packed_read == std::pair{c, id}) read = 0;
      deepest_allowed = std::min(deepest_allowed, read);
    }
    const bool reduction = is_reduction_opcode(body.op(id).opcode);
    if (!one_group && (chosen == Placement::kTile || reduction)) continue;  // stays at root
    if (chosen == Placement::kInline && !reduction) {
      schedule.placement[id] = Placement::kInline;  // inlined into each consumer wherever it is
      read_depth[id] = deepest_allowed;
    } else if (deepest_allowed == 0) {
      continue;  // read at root (by a padded copy): stored
    } else {
      schedule.placement[id] = depth(chosen) <= deepest_allowed ? chosen : Placement::kTile;
    }
    // An op inlined into consumers of several groups is read in each of them: its own producers
    // can then only be at root (Halide rejects a compute_at that does not enclose every use).
    schedule.group_root[id] = one_group ? group : kSeveralGroups;
  }

  // Stages: the kernel root from the stage knobs when the space has them; other stages at root
  // inherit vector width and parallelism (not tiles: their shapes differ) in a tile space, or get
  // the heuristic schedule in a fusion space.
  const auto stages = knob_or(knobs, kStagesKnob, 0);
  check_range(kStagesKnob, stages, 0, 1);
  const bool kernel_stages = !has_stage_knobs && stages == 1;
  const auto vector = knob_or(knobs, kVectorKnob, 1), unroll = knob_or(knobs, kUnrollKnob, 1);
  const auto parallel = knob_or(knobs, kParallelKnob, 0), loop_order = knob_or(knobs, kOrderKnob, 0);
  check_range(kVectorKnob, vector, 1, 64);
  check_range(kUnrollKnob, unroll, 1, 64);
  check_range(kParallelKnob, parallel, 0, 2);
  check_range(kOrderKnob, loop_order, 0, 1);
  for (OpId id = 0; id < n; ++id) {
    const Op& op = body.op(id);
    if (op.is_leaf_value() || schedule.placement[id] != Placement::kRoot) continue;
    const bool reduction = is_reduction_opcode(op.opcode);
    const std::int64_t red_extent = reduction ? first_reduction_extent(body, id) : 1;
    StageSchedule stage;
    if (!has_stage_knobs) {
      stage = heuristic_stage(body, id);
      if (kernel_stages) schedule_as_kernel(body, id, stage, schedule);
    } else if (id == root) {
      for (std::size_t d = 0; d < op.shape.dims.size(); ++d) {
        const auto tile = knob_or(knobs, tile_out_knob(d), op.shape.dims[d]);
        check_range(tile_out_knob(d), tile, 1, std::max<std::int64_t>(op.shape.dims[d], 1));
        stage.tiles.push_back(tile);
      }
      stage.vector = static_cast<int>(vector);
      if (const auto it = knobs.find(kVectorDimKnob); it != knobs.end()) {
        const auto allowed = vector_dims(body);
        if (std::find(allowed.begin(), allowed.end(), it->second) == allowed.end())
          throw std::invalid_argument("knob " + std::string(kVectorDimKnob) + " = " + std::to_string(it->second) +
                                      " is not a dimension the lanes can run along");
        stage.vector_dim = static_cast<int>(it->second);
      }
      if (const auto it = knobs.find(kRowsDimKnob); it != knobs.end() && it->second >= 0) {
        const std::size_t rank = op.shape.dims.size();
        if (it->second >= static_cast<std::int64_t>(rank) || static_cast<std::size_t>(it->second) == lanes_dim(stage, rank))
          throw std::invalid_argument("knob " + std::string(kRowsDimKnob) + " = " + std::to_string(it->second) +
                                      " is not an output dimension other than the lanes'");
        stage.rows_dim = static_cast<int>(it->second);
      }
      stage.unroll = static_cast<int>(unroll);
      stage.parallel = static_cast<int>(parallel);
      stage.order = static_cast<int>(loop_order);
      const long accumulated = accumulated_reduction_of(body, root);
      if (accumulated >= 0) {
        const auto extent = first_reduction_extent(body, static_cast<OpId>(accumulated));
        stage.reduction_tile = knob_or(knobs, kTileReductionKnob, extent);
        check_range(kTileReductionKnob, stage.reduction_tile, 1, std::max<std::int64_t>(extent, 1));
        stage.reduction_order = static_cast<int>(knob_or(knobs, kReductionOrderKnob, stage.reduction_order));
        check_range(kReductionOrderKnob, stage.reduction_order, 0, 1);
      }
      if (reduction) {
        const auto accumulate = knob_or(knobs, kAccumulateKnob, 0);
        check_range(kAccumulateKnob, accumulate, 0, 2);
        stage.accumulator = static_cast<Placement>(accumulate);
      }
    } else {
      stage.tiles = op.shape.dims;
      stage.vector = static_cast<int>(vector);
      stage.parallel = parallel > 0 ? 1 : 0;
      stage.reduction_tile = red_extent;
    }
    schedule.stages[id] = std::move(stage);
  }
  if (packable >= 0 && schedule.stages.count(root)) {
    // One panel per register block row: as many lanes as the root's vectors cover.
    const StageSchedule& stage = schedule.stages.at(root);
    const int panel_lanes = static_cast<int>(std::max<std::int64_t>(1, std::min<std::int64_t>(stage.vector, stage.tiles[lanes])));
    schedule.panels[static_cast<OpId>(packable)] = {panel_lanes, lanes};
  }
  return schedule;
}

SearchSpace halide_schedule_space(const Kernel& kernel) {
  const Program& body = kernel.body();
  check_supported(body);
  const OpId root = body.root();
  const auto& dims = body.op(root).shape.dims;
  std::vector<Knob> knobs;
  for (std::size_t d = 0; d < dims.size(); ++d) knobs.push_back({tile_out_knob(d), powers_up_to(dims[d])});
  const long accumulated = accumulated_reduction_of(body, root);
  if (accumulated >= 0) {
    knobs.push_back({kTileReductionKnob, powers_up_to(first_reduction_extent(body, static_cast<OpId>(accumulated)))});
    if (moving_reduction_dims(body, static_cast<OpId>(accumulated)) >= 2) knobs.push_back({kReductionOrderKnob, {0, 1}});
  }
  const std::vector<std::int64_t> lane_dims = vector_dims(body);
  const std::size_t rank = dims.size();
  std::vector<bool> packable_along(rank, false);
  for (std::size_t d = 0; d < rank; ++d) packable_along[d] = packable_reduction_of(body, d) >= 0;
  if (!dims.empty()) {
    knobs.push_back({kVectorKnob, kVectorWidths});
    if (lane_dims.size() > 1) knobs.push_back({kVectorDimKnob, lane_dims});
    if (lane_dims.size() > 1 && rank >= 3) {
      std::vector<std::int64_t> rows = {-1};  // the default: the innermost other than the lanes'
      for (std::size_t d = 0; d < rank; ++d)
        if (dims[d] >= 2) rows.push_back(static_cast<std::int64_t>(d));
      knobs.push_back({kRowsDimKnob, rows});
    }
    knobs.push_back({kParallelKnob, dims.size() >= 2 ? std::vector<std::int64_t>{0, 1, 2} : std::vector<std::int64_t>{0, 1}});
  }
  if (dims.size() >= 2) {
    knobs.push_back({kUnrollKnob, kUnrollFactors});
    knobs.push_back({kOrderKnob, {0, 1}});
  }
  if (is_reduction_opcode(body.op(root).opcode)) knobs.push_back({kAccumulateKnob, {0, 1, 2}});
  if (!padded_reads(body).empty()) knobs.push_back({kPadKnob, {0, 1, 2}});
  if (std::any_of(lane_dims.begin(), lane_dims.end(), [&](std::int64_t d) { return packable_along[static_cast<std::size_t>(d)]; }))
    knobs.push_back({kPackKnob, {0, 1}});
  const auto& edges = body.edges();
  for (std::size_t e = 0; e < edges.size(); ++e)
    if (is_fusible(body, edges[e])) knobs.push_back({fuse_knob(e), {0, 1, 2}});
  if (knobs.empty()) knobs.push_back({tile_out_knob(0), {1}});  // a scalar kernel: one config

  // Validity: vector lanes and unrolled rows fit in their tiles; packed panels exist along the
  // lanes; fused edges form an acyclic grouping.
  SearchSpace shape(knobs);
  std::vector<KnobInfo> roles = knob_roles(shape);
  const auto index_of = [&](const std::string& name) -> long {
    for (std::size_t k = 0; k < knobs.size(); ++k)
      if (knobs[k].name == name) return static_cast<long>(k);
    return -1;
  };
  std::vector<long> tile_knob(rank);
  for (std::size_t d = 0; d < rank; ++d) tile_knob[d] = index_of(tile_out_knob(d));
  const long vector = index_of(kVectorKnob), unroll = index_of(kUnrollKnob), pack = index_of(kPackKnob);
  const long vector_dim = index_of(kVectorDimKnob), rows_knob = index_of(kRowsDimKnob);
  const Program program = body;
  return SearchSpace(std::move(knobs), [=](const Config& config) {
    const std::size_t lanes = vector_dim >= 0 ? static_cast<std::size_t>(config.values[vector_dim]) : rank - 1;
    if (vector >= 0 && config.values[vector] > config.values[tile_knob[lanes]]) return false;
    // Packed panels are read at (index % lanes, index / lanes): only a tile that is whole vectors
    // keeps that a plain vector load (a ragged tile's lanes start mid-panel: a gather per load).
    if (pack >= 0 && config.values[pack] == 1 &&
        (!packable_along[lanes] || (vector >= 0 && config.values[tile_knob[lanes]] % config.values[vector] != 0)))
      return false;
    // Rows along a dimension of their own: never the lanes', nor the default named twice.
    const std::int64_t rows_choice = rows_knob >= 0 ? config.values[rows_knob] : -1;
    if (rows_choice >= 0 && (static_cast<std::size_t>(rows_choice) == lanes || static_cast<std::size_t>(rows_choice) == rows_dim(rank, lanes)))
      return false;
    if (unroll >= 0 && config.values[unroll] > config.values[tile_knob[rows_dim(rank, lanes, rows_choice)]]) return false;
    FusionConfig fusion = FusionConfig::none(program);
    for (std::size_t k = 0; k < roles.size(); ++k)
      if (roles[k].role == KnobRole::kFuse && config.values[k] != 0) fusion.fused[roles[k].index] = true;
    return is_legal(program, fusion);
  });
}

Config unscheduled_config(const SearchSpace& space, const Kernel& kernel) {
  const auto& dims = kernel.body().op(kernel.body().root()).shape.dims;
  Config config;
  for (const Knob& knob : space.knobs()) {
    const KnobInfo info = knob_role(knob.name);
    std::int64_t value = knob.values.front();  // 1 lane, no unroll, serial, order 0, at root
    if (info.role == KnobRole::kTileOut && info.index < dims.size()) value = knob.values.back();  // untiled
    if (info.role == KnobRole::kTileReduction) value = knob.values.back();
    if (knob.name == kPadKnob) value = static_cast<std::int64_t>(Placement::kInline);  // Halide's default
    config.values.push_back(value);
  }
  return config;
}

Config heuristic_config(const SearchSpace& space, const Kernel& kernel) {
  const Program& body = kernel.body();
  const OpId root = body.root();
  StageSchedule stage = heuristic_stage(body, root);
  const long accumulated = accumulated_reduction_of(body, root);
  if (accumulated >= 0) stage.reduction_tile = first_reduction_extent(body, static_cast<OpId>(accumulated));
  const bool packs = heuristic_packs(body);
  Config config;
  for (const Knob& knob : space.knobs()) {
    const KnobInfo info = knob_role(knob.name);
    std::int64_t want = 1;
    if (info.role == KnobRole::kTileOut) want = info.index < stage.tiles.size() ? stage.tiles[info.index] : 1;
    else if (info.role == KnobRole::kTileReduction) want = stage.reduction_tile;
    else if (knob.name == kVectorKnob) want = stage.vector;
    else if (knob.name == kReductionOrderKnob) want = stage.reduction_order;
    else if (knob.name == kVectorDimKnob) want = static_cast<std::int64_t>(lanes_dim(stage, stage.tiles.size()));
    else if (knob.name == kRowsDimKnob) want = stage.rows_dim;
    else if (knob.name == kUnrollKnob) want = stage.unroll;
    // Packed, the column tiles go outside the row tiles (GotoBLAS's order): a column block's
    // panels stay in cache while every row tile reads them.
    else if (knob.name == kOrderKnob) want = packs ? 1 : stage.order;
    else if (knob.name == kParallelKnob) want = stage.parallel;  // the two outermost tile loops
    else if (knob.name == kAccumulateKnob) want = static_cast<std::int64_t>(stage.accumulator);
    else if (knob.name == kPadKnob) want = static_cast<std::int64_t>(Placement::kTile);
    else if (knob.name == kPackKnob) want = packs ? 1 : 0;
    // The largest domain value not above the wish (domains are ascending).
    std::int64_t value = knob.values.front();
    for (std::int64_t v : knob.values)
      if (v <= want) value = v;
    config.values.push_back(value);
  }
  // Packed only where the tile is whole vectors (the space's rule), else read in place, in the
  // stage's own order.
  if (!space.contains(config))
    for (std::size_t k = 0; k < space.knobs().size(); ++k) {
      if (space.knobs()[k].name == kPackKnob) config.values[k] = 0;
      if (space.knobs()[k].name == kOrderKnob) config.values[k] = stage.order;
    }
  return config;
}

std::map<std::string, std::int64_t> named_knobs(const SearchSpace& space, const Config& config) {
  std::map<std::string, std::int64_t> named;
  for (std::size_t k = 0; k < space.knobs().size() && k < config.values.size(); ++k) named[space.knobs()[k].name] = config.values[k];
  return named;
}

}  // namespace perftune
