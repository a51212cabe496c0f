#include "surrogate/analytical/analytical_model.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <stdexcept>
#include <unordered_map>
#include <utility>

#include "ir/fusion.h"
#include "surrogate/analytical/placement_work.h"
#include "surrogate/fusion/fused_kernel_cache.h"

namespace perftune {

namespace {

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return b <= 0 ? a : (a + b - 1) / b; }
std::int64_t round_up(std::int64_t a, std::int64_t b) { return ceil_div(a, b) * b; }

// Operand dim `operand_dim` of operand `operand` spans (out region of `out_dim` - 1) * scale + 1 + halo.
struct Correspondence {
  int operand = 0;
  int operand_dim = 0;
  int out_dim = 0;
  std::int64_t scale = 1;
  std::int64_t halo = 0;
};

// Which iteration-shape dimension an array dimension follows (-1: none, the block spans the dim).
struct DimLink {
  int anchor = -1;
  std::int64_t scale = 1;
  std::int64_t halo = 0;
};

int rank_of(const Shape* shape) { return static_cast<int>(shape->dims.size()); }

// The shape's minor-to-major order if it is a permutation of its dims (layouts come from files),
// else row-major.
std::vector<std::int64_t> physical_layout(const Shape& shape) {
  std::vector<std::int64_t> layout = shape.layout();
  std::vector<std::int64_t> sorted = layout;
  std::sort(sorted.begin(), sorted.end());
  bool permutation = sorted.size() == shape.dims.size();
  for (std::size_t i = 0; permutation && i < sorted.size(); ++i) permutation = sorted[i] == static_cast<std::int64_t>(i);
  if (permutation) return layout;
  Shape row_major = shape;
  row_major.minor_to_major.clear();
  return row_major.layout();
}

std::vector<Correspondence> raw_correspondences(const Op& op, const std::vector<const Shape*>& operands) {
  std::vector<Correspondence> result;
  const int out_rank = static_cast<int>(op.shape.dims.size());
  if (op.shape.element_type == ElementType::kTuple || op.opcode == "tuple" || op.opcode == "get-tuple-element")
    return result;
  if (op.opcode == "dot" && operands.size() >= 2) {
    DotDims dims = op.dot.value_or(DotDims{});
    if (!op.dot) {  // XLA's canonical matmul when the attribute is absent
      dims.lhs_contracting = {rank_of(operands[0]) - 1};
      dims.rhs_contracting = {0};
    }
    int out = 0;
    for (std::size_t j = 0; j < dims.lhs_batch.size() && j < dims.rhs_batch.size(); ++j, ++out) {
      result.push_back({0, static_cast<int>(dims.lhs_batch[j]), out});
      result.push_back({1, static_cast<int>(dims.rhs_batch[j]), out});
    }
    auto free_dims = [](int rank, const std::vector<std::int64_t>& batch, const std::vector<std::int64_t>& contracting) {
      std::vector<int> free;
      for (int d = 0; d < rank; ++d)
        if (std::find(batch.begin(), batch.end(), d) == batch.end() &&
            std::find(contracting.begin(), contracting.end(), d) == contracting.end())
          free.push_back(d);
      return free;
    };
    for (int d : free_dims(rank_of(operands[0]), dims.lhs_batch, dims.lhs_contracting)) result.push_back({0, d, out++});
    for (int d : free_dims(rank_of(operands[1]), dims.rhs_batch, dims.rhs_contracting)) result.push_back({1, d, out++});
    return result;
  }
  if (op.opcode == "convolution" && operands.size() >= 2) {
    const ConvolutionDims dims = op.convolution.value_or(ConvolutionDims{});
    result.push_back({0, static_cast<int>(dims.input_batch), static_cast<int>(dims.output_batch)});
    result.push_back({1, static_cast<int>(dims.kernel_output_feature), static_cast<int>(dims.output_feature)});
    for (std::size_t j = 0; j < dims.input_spatial.size() && j < dims.output_spatial.size(); ++j) {
      std::int64_t stride = 1, halo = 0;
      if (op.window && j < op.window->size.size()) {
        const std::int64_t dilation = j < op.window->window_dilation.size() ? std::max<std::int64_t>(1, op.window->window_dilation[j]) : 1;
        stride = j < op.window->stride.size() ? std::max<std::int64_t>(1, op.window->stride[j]) : 1;
        halo = (op.window->size[j] - 1) * dilation;
      }
      result.push_back({0, static_cast<int>(dims.input_spatial[j]), static_cast<int>(dims.output_spatial[j]), stride, halo});
    }
    return result;
  }
  if (op.opcode == "reduce") {
    const std::size_t arrays = std::max<std::size_t>(1, operands.size() / 2);
    for (std::size_t k = 0; k < arrays && k < operands.size(); ++k) {
      int out = 0;
      for (int d = 0; d < rank_of(operands[k]); ++d)
        if (std::find(op.dimensions.begin(), op.dimensions.end(), d) == op.dimensions.end() && out < out_rank)
          result.push_back({static_cast<int>(k), d, out++});
    }
    return result;
  }
  if (op.opcode == "broadcast" && !operands.empty()) {
    for (int i = 0; i < rank_of(operands[0]) && i < static_cast<int>(op.dimensions.size()); ++i)
      result.push_back({0, i, static_cast<int>(op.dimensions[static_cast<std::size_t>(i)])});
    return result;
  }
  if (op.opcode == "transpose" && !operands.empty()) {
    for (int i = 0; i < out_rank && i < static_cast<int>(op.dimensions.size()); ++i)
      result.push_back({0, static_cast<int>(op.dimensions[static_cast<std::size_t>(i)]), i});
    return result;
  }
  // Elementwise ops and generic data movement (copy, convert, slice, pad, concatenate, same-rank
  // reshape/bitcast): same-rank operands follow the output dimension by dimension.
  for (std::size_t k = 0; k < operands.size(); ++k)
    if (rank_of(operands[k]) == out_rank && out_rank > 0)
      for (int d = 0; d < out_rank; ++d) result.push_back({static_cast<int>(k), d, d});
  return result;
}

// Attributes come from files: drop any pairing that names a dimension the arrays do not have.
std::vector<Correspondence> correspondences(const Op& op, const std::vector<const Shape*>& operands) {
  std::vector<Correspondence> result = raw_correspondences(op, operands);
  const int out_rank = static_cast<int>(op.shape.dims.size());
  std::erase_if(result, [&](const Correspondence& c) {
    return c.operand < 0 || c.operand >= static_cast<int>(operands.size()) || c.out_dim < 0 || c.out_dim >= out_rank ||
           c.operand_dim < 0 || c.operand_dim >= rank_of(operands[static_cast<std::size_t>(c.operand)]);
  });
  return result;
}

bool narrower_float(ElementType a, ElementType b) { return element_type_bytes(a) < element_type_bytes(b); }

// Dims of a matrix op's second operand (conv kernel / dot rhs) that are contracted, and the one
// that feeds the matrix unit's contraction rows (input features / minor contracting dim).
struct ContractedDims {
  std::vector<std::size_t> dims;
  std::size_t feature = 0;
};

ContractedDims contracted_dims(const Op& op, const Shape& kernel) {
  ContractedDims result;
  if (op.opcode == "convolution") {
    const ConvolutionDims dims = op.convolution.value_or(ConvolutionDims{});
    for (std::size_t d = 0; d < kernel.dims.size(); ++d)
      if (static_cast<std::int64_t>(d) != dims.kernel_output_feature) result.dims.push_back(d);
    result.feature = static_cast<std::size_t>(dims.kernel_input_feature);
  } else {
    const std::vector<std::int64_t> contracting = op.dot ? op.dot->rhs_contracting : std::vector<std::int64_t>{0};
    for (std::int64_t d : contracting) result.dims.push_back(static_cast<std::size_t>(d));
    result.feature = result.dims.empty() ? 0 : result.dims.back();
  }
  return result;
}

}  // namespace

// Everything about a kernel that does not depend on the tile: computed once per predict() call.
class KernelAnalysis {
 public:
  KernelAnalysis(const Kernel& kernel, const DeviceSpec& spec) : flat(flatten_kernel(kernel.body())) {
    for (const FlatOp& node : flat.ops) {
      std::vector<const Shape*> shapes;
      for (int operand : node.operands) shapes.push_back(&flat.ops[static_cast<std::size_t>(operand)].op->shape);
      operand_shapes.push_back(std::move(shapes));
    }
    cost = kernel_cost(flat);
    anchor = choose_anchor(spec);
    if (anchor >= 0) shape = flat.ops[static_cast<std::size_t>(anchor)].op->shape.dims;
    // Loop nest order, outer to inner. TPU: physical major to minor, the order of output_bounds.
    // CPU: logical order, row-major, as the CPU backend nests its loops.
    const int rank = static_cast<int>(shape.size());
    if (spec.tile_knob_units == TileKnobUnits::kLayoutTiles && anchor >= 0) {
      const std::vector<std::int64_t> layout = physical_layout(flat.ops[static_cast<std::size_t>(anchor)].op->shape);
      for (auto it = layout.rbegin(); it != layout.rend(); ++it) loop_order.push_back(static_cast<int>(*it));
    } else {
      for (int d = 0; d < rank; ++d) loop_order.push_back(d);
    }
    link_dimensions();
    for (const std::vector<DimLink>& op_links : links) {
      std::vector<int> dims;
      for (const DimLink& link : op_links)
        if (link.anchor >= 0 && std::find(dims.begin(), dims.end(), link.anchor) == dims.end()) dims.push_back(link.anchor);
      followed.push_back(std::move(dims));
    }
    for (std::size_t i = 0; i < flat.ops.size(); ++i) {
      const OpClass kind = classify_op(*flat.ops[i].op);
      if (kind == OpClass::kMatrix || kind == OpClass::kReduce) {
        contraction = kind == OpClass::kMatrix ? contraction_size(*flat.ops[i].op, operand_shapes[i])
                                               : std::max<std::int64_t>(1, operand_shapes[i].empty() ? 1 :
                                                     operand_shapes[i][0]->element_count() /
                                                     std::max<std::int64_t>(1, flat.ops[i].op->shape.element_count()));
        if (kind == OpClass::kMatrix) {
          matrix_op = static_cast<int>(i);
          break;
        }
      }
    }
  }

  FlatKernel flat;
  std::vector<std::vector<const Shape*>> operand_shapes;
  KernelCost cost;
  int anchor = -1;
  std::vector<std::int64_t> shape;              // iteration shape (the anchor's dims)
  std::vector<int> loop_order;                  // iteration dims, outer to inner
  std::vector<std::vector<DimLink>> links;      // per flat op, per dim
  std::vector<std::vector<int>> followed;       // per flat op, the iteration dims it follows
  std::int64_t contraction = 1;                 // of the main matrix (or reduce) op, for tile.red
  int matrix_op = -1;                           // the first dot/convolution, whose kernel knobs tile

 private:
  int choose_anchor(const DeviceSpec& spec) const {
    if (flat.ops.empty()) return -1;
    if (spec.tile_knob_units == TileKnobUnits::kElements) {
      // ir/knob_roles.h: tile.out.<d> tiles the kernel's output (its root op's shape).
      return flat.outputs.empty() ? static_cast<int>(flat.ops.size()) - 1 : flat.outputs.front();
    }
    // XLA TPU: the matrix op of an output fusion, else the largest array computed (ties: the
    // later op, closer to the root); a reduce stands for its operand, the array it iterates over
    // (the TPU data tiles reduce fusions over the reduce's input). Views of parameters (bitcast)
    // only as a last resort.
    auto best_of = [&](auto accept) {
      int best = -1;
      for (std::size_t i = 0; i < flat.ops.size(); ++i) {
        const Op& op = *flat.ops[i].op;
        if (op.shape.element_type == ElementType::kTuple || !accept(op)) continue;
        std::size_t candidate = i;
        if (classify_op(op) == OpClass::kReduce && !flat.ops[i].operands.empty())
          candidate = static_cast<std::size_t>(flat.ops[i].operands[0]);
        const Shape& shape = flat.ops[candidate].op->shape;
        if (shape.element_type == ElementType::kTuple) continue;
        if (best < 0 || shape.element_count() >= flat.ops[static_cast<std::size_t>(best)].op->shape.element_count())
          best = static_cast<int>(candidate);
      }
      return best;
    };
    int best = best_of([](const Op& op) { return classify_op(op) == OpClass::kMatrix; });
    if (best < 0) best = best_of([](const Op& op) {
      const OpClass kind = classify_op(op);
      return kind == OpClass::kVector || kind == OpClass::kReduce || kind == OpClass::kDataMovement;
    });
    if (best < 0) best = best_of([](const Op& op) { return !op.is_parameter(); });
    if (best < 0) best = flat.outputs.empty() ? 0 : flat.outputs.front();
    return best;
  }

  // Propagates "which iteration dim does this array dim follow" from the anchor backwards to
  // operands and forwards to users until nothing changes.
  void link_dimensions() {
    links.resize(flat.ops.size());
    std::vector<std::vector<Correspondence>> corr(flat.ops.size());
    for (std::size_t i = 0; i < flat.ops.size(); ++i) {
      links[i].assign(flat.ops[i].op->shape.dims.size(), DimLink{});
      corr[i] = correspondences(*flat.ops[i].op, operand_shapes[i]);
    }
    if (anchor < 0) return;
    for (std::size_t d = 0; d < shape.size(); ++d) links[static_cast<std::size_t>(anchor)][d] = DimLink{static_cast<int>(d), 1, 0};
    for (std::size_t pass = 0; pass <= 2 * flat.ops.size(); ++pass) {
      bool changed = false;
      for (std::size_t i = flat.ops.size(); i-- > 0;) {
        for (const Correspondence& c : corr[i]) {
          const DimLink& out = links[i][static_cast<std::size_t>(c.out_dim)];
          const auto producer = static_cast<std::size_t>(flat.ops[i].operands[static_cast<std::size_t>(c.operand)]);
          DimLink& in = links[producer][static_cast<std::size_t>(c.operand_dim)];
          if (out.anchor < 0 || in.anchor >= 0) continue;
          in = DimLink{out.anchor, out.scale * c.scale, out.halo * c.scale + c.halo};
          changed = true;
        }
      }
      for (std::size_t i = 0; i < flat.ops.size(); ++i) {
        for (const Correspondence& c : corr[i]) {
          if (c.scale != 1 || c.halo != 0) continue;
          const auto producer = static_cast<std::size_t>(flat.ops[i].operands[static_cast<std::size_t>(c.operand)]);
          const DimLink& in = links[producer][static_cast<std::size_t>(c.operand_dim)];
          DimLink& out = links[i][static_cast<std::size_t>(c.out_dim)];
          if (in.anchor < 0 || out.anchor >= 0) continue;
          out = in;
          changed = true;
        }
      }
      if (!changed) break;
    }
  }
};

namespace {

// Elements a vector register holds along the minor dim (lanes) and the second minor (sublanes).
std::int64_t lanes_for(const DeviceSpec& spec, ElementType type) {
  const int bytes = std::max(1, element_type_bytes(type));
  // A CPU packs narrow types along its one vector dim; a TPU packs them along sublanes.
  if (spec.vector_tile[0] > 1) return spec.vector_tile[1];
  return std::max<std::int64_t>(1, spec.vector_tile[1] * 4 / bytes);
}
std::int64_t sublanes_for(const DeviceSpec& spec, ElementType type) {
  const int bytes = std::max(1, element_type_bytes(type));
  if (spec.vector_tile[0] <= 1) return 1;
  return spec.vector_tile[0] * std::max(1, 4 / bytes);
}

// Elements a block of `region` occupies once its minor two physical dims are rounded up to whole
// vector registers.
double padded_elements(const DeviceSpec& spec, const Shape& shape, std::vector<std::int64_t> region) {
  const std::vector<std::int64_t> layout = physical_layout(shape);
  if (!layout.empty()) {
    const auto minor = static_cast<std::size_t>(layout[0]);
    region[minor] = round_up(region[minor], lanes_for(spec, shape.element_type));
  }
  if (layout.size() >= 2) {
    const auto second = static_cast<std::size_t>(layout[1]);
    region[second] = round_up(region[second], sublanes_for(spec, shape.element_type));
  }
  double elements = 1.0;
  for (std::int64_t extent : region) elements *= static_cast<double>(extent);
  return elements;
}

// The fraction of the FMA peak a CPU register block reaches: the lanes its vectors fill, times
// the lesser of the FMA-latency bound (accumulators against kFmaChains) and the load bound (per
// reduction step one load per vector register and one broadcast per row, against one FMA per
// accumulator, as many load ports as FMA pipes), less what a block beyond the register file spills.
double register_block_efficiency(const DeviceSpec& spec, const LoopNest& loops, bool accumulates) {
  const std::int64_t lanes = lanes_for(spec, ElementType::kF32);
  const std::int64_t width = std::max<std::int64_t>(1, loops.vector);
  const std::int64_t registers_per_row = ceil_div(width, lanes);
  const double lane_use = static_cast<double>(width) / static_cast<double>(registers_per_row * lanes);
  if (!accumulates) return lane_use;
  const double rows = static_cast<double>(std::max<std::int64_t>(1, loops.unroll));
  const double accumulators = rows * static_cast<double>(registers_per_row);
  const double latency_bound = std::min(1.0, accumulators / kFmaChains);
  const double load_bound = std::min(1.0, accumulators / (rows + static_cast<double>(registers_per_row)));
  // 32 architectural vector registers with 64-byte vectors (AVX-512), else 16 (AVX2, SSE).
  const double register_file = lanes * 4 >= 64 ? 32.0 : 16.0;
  const double live = accumulators + static_cast<double>(registers_per_row) + 1.0;
  const double spill = live > register_file ? register_file / live : 1.0;
  return lane_use * std::min(latency_bound, load_bound) * spill;
}

// A tile request resolved against a kernel: the tile and its loop nest, the passes over the main
// contraction, and the block of every array one tile touches.
class TiledKernel {
 public:
  TiledKernel(const KernelAnalysis& a, const DeviceSpec& spec, const TileRequest& request) : loops(request.loops), a_(a), spec_(spec) {
    const std::size_t rank = a.shape.size();
    tile = request.out;
    tile.resize(rank, 0);
    count.assign(rank, 1);
    for (std::size_t d = 0; d < rank; ++d) {
      const std::int64_t extent = std::max<std::int64_t>(1, a.shape[d]);
      tile[d] = tile[d] <= 0 ? extent : std::min(tile[d], extent);
      count[d] = ceil_div(extent, tile[d]);
      out_tiles *= count[d];
    }
    loop_order = a.loop_order;
    if (loops && loops->order == 1 && loop_order.size() >= 2) std::swap(loop_order[loop_order.size() - 1], loop_order[loop_order.size() - 2]);
    lanes_dim = !loops || rank == 0 ? -1 : loops->vector_dim >= 0 ? loops->vector_dim : static_cast<int>(rank) - 1;
    split_contraction(request);
    anchor_elements_ = a.anchor >= 0 ? static_cast<double>(a.flat.ops[static_cast<std::size_t>(a.anchor)].op->shape.element_count()) : 0.0;
    for (std::size_t d = 0; d < rank; ++d)
      tile_fraction_ *= static_cast<double>(tile[d]) / static_cast<double>(std::max<std::int64_t>(1, a.shape[d]));
  }

  std::optional<LoopNest> loops;    // CPU: the config's loop nest
  std::vector<std::int64_t> tile;   // elements per iteration dim, at most the dim
  std::vector<std::int64_t> count;  // tiles per iteration dim
  std::int64_t out_tiles = 1;       // tiles of the iteration shape
  std::vector<int> loop_order;      // the tile loops outer to inner, as this config nests them
  int lanes_dim = -1;               // the iteration dim the loop nest's lanes run along
  std::int64_t k_tiles = 1;         // passes over the main contraction
  std::int64_t k_window_tiles = 1;  // of them, the passes over the kernel operand's window dims
  double k_padded = 0.0;            // the main contraction, each pass padded to the matrix unit

  // The block of flat op i's array that one tile touches.
  std::vector<std::int64_t> region_of(std::size_t i) const {
    const std::vector<std::int64_t>& dims = a_.flat.ops[i].op->shape.dims;
    std::vector<std::int64_t> region(dims);
    for (std::size_t j = 0; j < dims.size(); ++j) {
      const DimLink& link = a_.links[i][j];
      if (link.anchor < 0) continue;
      const std::int64_t t = tile[static_cast<std::size_t>(link.anchor)];
      region[j] = std::min(dims[j], (t - 1) * link.scale + 1 + link.halo);
    }
    return region;
  }

  // Blocks fetched (or written): once per change of the block index, i.e. the product of the
  // tile counts of the loops down to the innermost one the array follows.
  // A loop of one tile never changes a block index, so only split dims count.
  double visits(std::size_t i) const {
    if (streamed(i)) return static_cast<double>(out_tiles);
    int innermost = -1;
    for (int d : a_.followed[i]) {
      if (count[static_cast<std::size_t>(d)] <= 1) continue;
      const auto pos = std::find(loop_order.begin(), loop_order.end(), d) - loop_order.begin();
      innermost = std::max(innermost, static_cast<int>(pos));
    }
    double n = 1.0;
    for (int p = 0; p <= innermost; ++p) n *= static_cast<double>(count[static_cast<std::size_t>(loop_order[static_cast<std::size_t>(p)])]);
    return n;
  }

  // Distinct blocks of an array: the product of the tile counts of the dims it follows.
  double distinct_blocks(std::size_t i) const {
    if (streamed(i)) return static_cast<double>(out_tiles);
    double n = 1.0;
    for (int d : a_.followed[i]) n *= static_cast<double>(count[static_cast<std::size_t>(d)]);
    return n;
  }

  double block_bytes(std::size_t i) const {
    const Shape& shape = a_.flat.ops[i].op->shape;
    const double bytes = padded_elements(spec_, shape, region_of(i)) * element_type_bytes(shape.element_type);
    return streamed(i) ? bytes * tile_fraction_ : bytes;
  }

 private:
  // The contraction of the main matrix op, tiled by tile.red (elements of the whole contraction,
  // CPU) or by the TPU's kernel_bounds (a block of the kernel operand): each pass is padded to
  // whole matrix-unit rows on the feature dim and to whole tiles on window dims.
  void split_contraction(const TileRequest& request) {
    k_padded = static_cast<double>(round_up(a_.contraction, spec_.matrix_unit[0]));
    if (a_.matrix_op >= 0 && a_.operand_shapes[static_cast<std::size_t>(a_.matrix_op)].size() >= 2) {
      const Op& op = *a_.flat.ops[static_cast<std::size_t>(a_.matrix_op)].op;
      const Shape& kernel = *a_.operand_shapes[static_cast<std::size_t>(a_.matrix_op)][1];
      const ContractedDims contracted = contracted_dims(op, kernel);
      if (request.reduction > 0) {
        const std::int64_t t = std::min(request.reduction, a_.contraction);
        k_tiles = ceil_div(a_.contraction, t);
        k_padded = static_cast<double>(k_tiles * round_up(t, spec_.matrix_unit[0]));
      } else {
        k_padded = 1.0;
        for (std::size_t d : contracted.dims) {
          if (d >= kernel.dims.size()) continue;
          const std::int64_t extent = kernel.dims[d];
          std::int64_t t = d < request.kernel.size() && request.kernel[d] > 0 ? std::min(request.kernel[d], extent) : extent;
          const std::int64_t passes = ceil_div(extent, t);
          k_tiles *= passes;
          if (d == contracted.feature) {
            k_padded *= static_cast<double>(passes * round_up(t, spec_.matrix_unit[0]));
          } else {
            k_padded *= static_cast<double>(passes * t);
            k_window_tiles *= passes;
          }
        }
      }
    } else if (request.reduction > 0) {
      k_tiles = ceil_div(a_.contraction, std::min(request.reduction, a_.contraction));
    }
  }

  // An array no dimension of which follows the iteration shape, yet at least as large as it, is
  // a relayout of it (a reshape or bitcast that changes rank): it streams through in pieces
  // proportional to the tile rather than whole for every tile.
  bool streamed(std::size_t i) const {
    if (tile.empty() || a_.links[i].empty()) return false;
    const bool unlinked = std::all_of(a_.links[i].begin(), a_.links[i].end(), [](const DimLink& l) { return l.anchor < 0; });
    return unlinked && static_cast<double>(a_.flat.ops[i].op->shape.element_count()) >= anchor_elements_;
  }

  const KernelAnalysis& a_;
  const DeviceSpec& spec_;
  double anchor_elements_ = 0.0;  // of the iteration shape's array
  double tile_fraction_ = 1.0;    // of the iteration shape one tile covers
};

// What the memory phase leaves to the timing: the bytes of one tile's blocks, and the pipeline
// steps lost to output blocks revisited.
struct BlockTraffic {
  double block_total = 0.0;
  double revisit_steps = 0.0;
};

// Memory traffic and the on-chip working set of the kernel's inputs and outputs.
BlockTraffic count_memory_traffic(const KernelAnalysis& a, const DeviceSpec& spec, const TiledKernel& tiled, TileEstimate& estimate) {
  const double buffers = spec.onchip_is_scratchpad ? 2.0 : 1.0;  // double buffering (TPU pipelining)
  BlockTraffic traffic;
  for (int input : a.flat.inputs) {
    const auto i = static_cast<std::size_t>(input);
    const double bytes = tiled.block_bytes(i);
    // A convolution input (its block has a window halo) is read again for every window pass.
    const bool windowed = std::any_of(a.links[i].begin(), a.links[i].end(), [](const DimLink& l) { return l.halo > 0; });
    estimate.bytes += tiled.visits(i) * bytes * static_cast<double>(windowed ? tiled.k_window_tiles : 1);
    // With a reduction tile, operands are resident one contraction slice at a time.
    const double resident = (tiled.k_tiles > 1 && a.flat.ops[i].op->shape.element_count() >= a.contraction)
                                ? bytes / static_cast<double>(tiled.k_tiles) : bytes;
    traffic.block_total += resident;
  }
  for (int output : a.flat.outputs) {
    const auto i = static_cast<std::size_t>(output);
    const double bytes = tiled.block_bytes(i);
    // An output block left and revisited later (a reduction whose reduced loops are not the
    // innermost) is written back each time and its partial result read in again.
    const double written = tiled.visits(i), revisits = std::max(0.0, written - tiled.distinct_blocks(i));
    estimate.bytes += (written + revisits) * bytes;
    traffic.revisit_steps += revisits;
    traffic.block_total += bytes;
  }
  estimate.working_set_bytes = buffers * traffic.block_total;
  return traffic;
}

// Compute time as the ops add it up, before any parallel loop divides it, and the type of the
// matrix operands, whose bytes stream from memory when the block overflows a cache.
struct ComputeTally {
  double seconds = 0.0;
  ElementType matrix_operand_type = ElementType::kF32;
};

// Flat op i, a matrix op: its block in whole matrix-unit passes (CPU: vectors of its register
// block), its accumulator, and the vector adds that join its contraction passes.
void count_matrix_op(const KernelAnalysis& a, const DeviceSpec& spec, const TiledKernel& tiled, std::size_t i, TileEstimate& estimate,
                     ComputeTally& compute) {
  const Op& op = *a.flat.ops[i].op;
  std::vector<std::int64_t> region = tiled.region_of(i);
  int n_dim = static_cast<int>(region.size()) - 1;
  if (op.opcode == "convolution") n_dim = static_cast<int>(op.convolution.value_or(ConvolutionDims{}).output_feature);
  // A CPU loop nest vectorizes the matrix op along its lanes' dimension, in vectors of its width.
  const bool register_block = tiled.loops && static_cast<int>(i) == a.matrix_op;
  std::int64_t n_unit = spec.matrix_unit[1];
  if (register_block) {
    n_unit = std::max<std::int64_t>(1, tiled.loops->vector);
    for (std::size_t j = 0; j < region.size(); ++j)
      if (a.links[i][j].anchor == tiled.lanes_dim && a.links[i][j].scale == 1) n_dim = static_cast<int>(j);
  }
  const double k = static_cast<int>(i) == a.matrix_op
                       ? tiled.k_padded
                       : static_cast<double>(round_up(contraction_size(op, a.operand_shapes[i]), spec.matrix_unit[0]));
  ElementType type = op.shape.element_type;
  for (const Shape* operand : a.operand_shapes[i])
    if (narrower_float(operand->element_type, type)) type = operand->element_type;
  compute.matrix_operand_type = type;
  double m = 1.0, n = 1.0;
  for (std::size_t j = 0; j < region.size(); ++j) {
    if (static_cast<int>(j) == n_dim) n = static_cast<double>(round_up(region[j], n_unit));
    else m *= static_cast<double>(region[j]);
  }
  m = static_cast<double>(round_up(static_cast<std::int64_t>(m), sublanes_for(spec, op.shape.element_type)));
  // A weight tile stays in the matrix unit at least as long as loading it takes: shifting a
  // 128x128 tile in costs 128 cycles, hidden by double buffering only behind >= 128 rows
  // (Jouppi et al., ISCA 2017 and CACM 2020). Fewer rows leave the unit waiting.
  m = std::max(m, static_cast<double>(spec.matrix_unit[0]));
  const double flops = 2.0 * m * n * k * static_cast<double>(tiled.out_tiles);
  estimate.matrix_flops += flops;
  if (register_block) estimate.register_efficiency = register_block_efficiency(spec, *tiled.loops, true);
  compute.seconds += flops / (spec.matrix_rate(type) * (register_block ? estimate.register_efficiency : 1.0));
  // The accumulator of the output block stays on chip for the whole contraction; every pass
  // after the first adds into it on the vector unit.
  if (std::find(a.flat.outputs.begin(), a.flat.outputs.end(), static_cast<int>(i)) == a.flat.outputs.end())
    estimate.working_set_bytes += padded_elements(spec, op.shape, region) * 4.0;
  if (static_cast<int>(i) == a.matrix_op && tiled.k_tiles > 1) {
    const double adds = padded_elements(spec, op.shape, region) * static_cast<double>(tiled.k_tiles - 1) * static_cast<double>(tiled.out_tiles);
    estimate.vector_flops += adds;
    compute.seconds += adds / spec.vector_rate(ElementType::kF32);
  }
}

// Compute, padded to whole vector registers and matrix-unit passes, redone for every tile.
ComputeTally count_compute(const KernelAnalysis& a, const DeviceSpec& spec, const TiledKernel& tiled, TileEstimate& estimate) {
  ComputeTally compute;
  for (std::size_t i = 0; i < a.flat.ops.size(); ++i) {
    const Op& op = *a.flat.ops[i].op;
    const OpClass kind = classify_op(op);
    if (kind == OpClass::kFree || op.shape.element_type == ElementType::kTuple) continue;
    if (kind == OpClass::kMatrix) {
      count_matrix_op(a, spec, tiled, i, estimate, compute);
      continue;
    }
    // Vector work: one operation per element of every register touched (a reduce touches its
    // operand block; data movement passes each register through once).
    double elements = padded_elements(spec, op.shape, tiled.region_of(i));
    if (kind == OpClass::kReduce && !a.flat.ops[i].operands.empty()) {
      const auto operand = static_cast<std::size_t>(a.flat.ops[i].operands[0]);
      elements = padded_elements(spec, a.flat.ops[operand].op->shape, tiled.region_of(operand));
    }
    const double flops = elements * static_cast<double>(tiled.out_tiles);
    estimate.vector_flops += flops;
    compute.seconds +=
        flops / (spec.vector_rate(op.shape.element_type) * (tiled.loops ? register_block_efficiency(spec, *tiled.loops, false) : 1.0));
  }
  return compute;
}

// A parallel loop spreads its tasks over the cores; the busiest core's share sets the time.
// Returns the seconds spent handing the tasks out.
double spread_over_cores(const DeviceSpec& spec, const TiledKernel& tiled, TileEstimate& estimate, double& compute_seconds) {
  double dispatch_seconds = 0.0;
  const std::optional<LoopNest>& loops = tiled.loops;
  if (loops && loops->parallel > 0 && !tiled.loop_order.empty()) {
    estimate.parallel_tasks = tiled.count[static_cast<std::size_t>(tiled.loop_order[0])];
    if (loops->parallel == 2 && tiled.loop_order.size() >= 2) estimate.parallel_tasks *= tiled.count[static_cast<std::size_t>(tiled.loop_order[1])];
    const std::int64_t per_core = ceil_div(estimate.parallel_tasks, std::max(1, spec.cores));
    estimate.cores_used = static_cast<double>(estimate.parallel_tasks) / static_cast<double>(per_core);
    compute_seconds /= estimate.cores_used;
    dispatch_seconds = kForkJoinSeconds + static_cast<double>(per_core) * kTaskSeconds;
  }
  return dispatch_seconds;
}

}  // namespace

AnalyticalModel::AnalyticalModel(DeviceSpec spec) : spec_(std::move(spec)) {
  if (spec_.memory_bandwidth <= 0 || spec_.matrix_flops.empty() || spec_.vector_flops.empty())
    throw std::invalid_argument("AnalyticalModel: device spec '" + spec_.name + "' lacks rates (load it with load_device_spec)");
}

AnalyticalModel::~AnalyticalModel() = default;

Shape AnalyticalModel::iteration_shape(const Kernel& kernel) const {
  const KernelAnalysis analysis(kernel, spec_);
  if (analysis.anchor < 0) return Shape{};
  return analysis.flat.ops[static_cast<std::size_t>(analysis.anchor)].op->shape;
}

TileEstimate AnalyticalModel::evaluate(const KernelAnalysis& a, const TileRequest& request) const {
  const TiledKernel tiled(a, spec_, request);
  TileEstimate estimate;
  estimate.tile = tiled.tile;
  estimate.iterations = tiled.out_tiles * tiled.k_tiles;
  estimate.useful_flops = a.cost.flops;
  const BlockTraffic traffic = count_memory_traffic(a, spec_, tiled, estimate);
  ComputeTally compute = count_compute(a, spec_, tiled, estimate);
  estimate.padded_flops = estimate.matrix_flops + estimate.vector_flops;
  const double dispatch_seconds = spread_over_cores(spec_, tiled, estimate, compute.seconds);

  const bool fits = estimate.working_set_bytes <= static_cast<double>(spec_.onchip_bytes);
  if (!fits && !spec_.onchip_is_scratchpad) {
    // A cache too small for the block: the matrix operands' reuse is lost, one operand element per
    // multiply-add comes from memory.
    estimate.bytes = std::max(estimate.bytes, estimate.matrix_flops / 2.0 * element_type_bytes(compute.matrix_operand_type));
  }
  estimate.compute_seconds = compute.seconds;
  estimate.memory_seconds = estimate.bytes / spec_.memory_bandwidth;
  // Double buffering overlaps loads with compute except the first block's load and the last
  // block's store.
  const double exposed = traffic.block_total / spec_.memory_bandwidth;
  // A revisit cannot be prefetched: the block's write-back must land before it is read again, a
  // pipeline step that overlaps nothing, charged like one more iteration.
  estimate.overhead_seconds = spec_.launch_overhead +
                              (static_cast<double>(estimate.iterations) + traffic.revisit_steps) * spec_.tile_overhead + exposed + dispatch_seconds;
  estimate.seconds = std::max(estimate.compute_seconds, estimate.memory_seconds) + estimate.overhead_seconds;
  if (!fits && spec_.onchip_is_scratchpad) {
    estimate.feasible = false;
    estimate.seconds = kInfeasibleSeconds * estimate.working_set_bytes / static_cast<double>(spec_.onchip_bytes);
  }
  return estimate;
}

TileEstimate AnalyticalModel::evaluate_auto(const KernelAnalysis& a) const {
  // Start untiled and, while the block does not fit on chip, take the one halving (of an
  // iteration dim or of the contraction) that shrinks the working set most, the faster on ties.
  TileRequest request;
  request.out = a.shape;
  for (auto& t : request.out) t = std::max<std::int64_t>(1, t);
  request.reduction = a.contraction;
  TileEstimate estimate = evaluate(a, request);
  while (estimate.working_set_bytes > static_cast<double>(spec_.onchip_bytes)) {
    std::optional<TileRequest> best_request;
    TileEstimate best;
    for (std::size_t d = 0; d <= request.out.size(); ++d) {
      TileRequest candidate = request;
      std::int64_t& t = d < request.out.size() ? candidate.out[d] : candidate.reduction;
      if (t <= 1) continue;
      t = ceil_div(t, 2);
      const TileEstimate e = evaluate(a, candidate);
      if (!best_request || e.working_set_bytes < best.working_set_bytes ||
          (e.working_set_bytes == best.working_set_bytes && e.seconds < best.seconds)) {
        best_request = candidate;
        best = e;
      }
    }
    if (!best_request || best.working_set_bytes >= estimate.working_set_bytes) break;
    request = *best_request;
    estimate = best;
  }
  if (!estimate.feasible) {
    // Nothing the model can split fits (e.g. a variadic reduce it does not follow): the kernel
    // still runs on the device, so report its roofline time, flagged, rather than the penalty
    // reserved for tiles a config asks for.
    estimate.seconds = std::max(estimate.compute_seconds, estimate.memory_seconds) + estimate.overhead_seconds;
  }
  return estimate;
}

struct KnobPlan {
  std::vector<KnobInfo> roles;
  std::vector<int> kernel_dim;  // per knob: d of tile.kernel.<d>, else -1
  bool tiled = false;           // any tile knob at all
  bool fused = false;           // any fuse.<e> knob
  // Indices of the CPU loop-nest knobs (-1: absent); a loop nest is read where `vector` is present.
  int vector = -1, vector_dim = -1, unroll = -1, parallel = -1, order = -1;

  explicit KnobPlan(const SearchSpace& space) : roles(knob_roles(space)) {
    static const std::string kPrefix = "tile.kernel.";
    for (std::size_t k = 0; k < roles.size(); ++k) {
      const std::string& name = space.knobs()[k].name;
      for (auto [knob, index] : {std::pair{kVectorKnob, &vector}, {kVectorDimKnob, &vector_dim}, {kUnrollKnob, &unroll},
                                 {kParallelKnob, &parallel}, {kOrderKnob, &order}})
        if (name == knob) *index = static_cast<int>(k);
      int dim = -1;
      if (name.size() > kPrefix.size() && name.compare(0, kPrefix.size(), kPrefix) == 0 &&
          std::all_of(name.begin() + static_cast<std::ptrdiff_t>(kPrefix.size()), name.end(), [](char c) { return c >= '0' && c <= '9'; }))
        dim = std::stoi(name.substr(kPrefix.size()));
      kernel_dim.push_back(dim);
      tiled = tiled || dim >= 0 || roles[k].role == KnobRole::kTileOut || roles[k].role == KnobRole::kTileReduction;
      fused = fused || roles[k].role == KnobRole::kFuse;
    }
  }
};

namespace {

// Element extent of knob value `value` for physical dim d (major to minor) of a rank-`rank` array
// under XLA's TPU convention (DeviceSpec::TileKnobUnits::kLayoutTiles).
std::int64_t layout_tile_unit(const DeviceSpec& spec, std::size_t d, std::size_t rank, ElementType type) {
  if (rank == 1) return spec.vector_tile[0] * spec.vector_tile[1];
  if (d == rank - 1) return lanes_for(spec, type);
  if (d == rank - 2) return spec.vector_tile[0];
  return 1;
}

// Knob values per physical dim -> elements per logical dim of `shape`.
std::vector<std::int64_t> from_layout_tiles(const DeviceSpec& spec, const Shape& shape, const std::vector<std::int64_t>& bounds) {
  const std::size_t rank = shape.dims.size();
  const std::vector<std::int64_t> layout = physical_layout(shape);
  std::vector<std::int64_t> tile(rank, 0);
  for (std::size_t d = 0; d < rank && d < bounds.size(); ++d) {
    if (bounds[d] <= 0) continue;
    const auto logical = static_cast<std::size_t>(layout[rank - 1 - d]);
    tile[logical] = bounds[d] * layout_tile_unit(spec, d, rank, shape.element_type);
  }
  return tile;
}

}  // namespace

TileEstimate AnalyticalModel::evaluate_config(const KernelAnalysis& a, const KnobPlan& plan, const Config& config) const {
  if (!plan.tiled) return evaluate_auto(a);
  const std::size_t rank = a.shape.size();
  const TileChoice choice = read_tiles(plan.roles, config, rank);
  TileRequest request;
  request.reduction = choice.reduction.value_or(0);
  if (spec_.kind == "cpu" && plan.vector >= 0) {
    auto value = [&](int knob, std::int64_t unset) {
      return knob >= 0 && static_cast<std::size_t>(knob) < config.values.size() ? config.values[static_cast<std::size_t>(knob)] : unset;
    };
    LoopNest loops;
    loops.vector = value(plan.vector, 1);
    loops.vector_dim = static_cast<int>(value(plan.vector_dim, -1));
    if (loops.vector_dim >= static_cast<int>(rank)) loops.vector_dim = -1;
    loops.unroll = value(plan.unroll, 1);
    loops.parallel = static_cast<int>(value(plan.parallel, 0));
    loops.order = static_cast<int>(value(plan.order, 0));
    request.loops = loops;
  }
  std::vector<std::int64_t> kernel_bounds;
  for (std::size_t k = 0; k < plan.kernel_dim.size() && k < config.values.size(); ++k) {
    if (plan.kernel_dim[k] < 0) continue;
    const auto d = static_cast<std::size_t>(plan.kernel_dim[k]);
    if (kernel_bounds.size() <= d) kernel_bounds.resize(d + 1, 0);
    kernel_bounds[d] = config.values[k];
  }
  if (spec_.tile_knob_units == TileKnobUnits::kElements) {
    request.out = choice.out;
    request.kernel = kernel_bounds;
  } else {
    if (a.anchor >= 0) request.out = from_layout_tiles(spec_, a.flat.ops[static_cast<std::size_t>(a.anchor)].op->shape, choice.out);
    if (a.matrix_op >= 0 && !kernel_bounds.empty() && a.operand_shapes[static_cast<std::size_t>(a.matrix_op)].size() >= 2)
      request.kernel = from_layout_tiles(spec_, *a.operand_shapes[static_cast<std::size_t>(a.matrix_op)][1], kernel_bounds);
  }
  return evaluate(a, request);
}

TileEstimate AnalyticalModel::estimate_tiles(const Kernel& kernel, const std::vector<std::int64_t>& tile,
                                             std::int64_t reduction_tile) const {
  return evaluate(KernelAnalysis(kernel, spec_), TileRequest{tile, reduction_tile, {}});
}

TileEstimate AnalyticalModel::estimate_auto(const Kernel& kernel) const {
  return evaluate_auto(KernelAnalysis(kernel, spec_));
}

namespace {

void accumulate(TileEstimate& total, const TileEstimate& part) {
  total.feasible = total.feasible && part.feasible;
  total.iterations += part.iterations;
  total.useful_flops += part.useful_flops;
  total.padded_flops += part.padded_flops;
  total.matrix_flops += part.matrix_flops;
  total.vector_flops += part.vector_flops;
  total.bytes += part.bytes;
  total.working_set_bytes = std::max(total.working_set_bytes, part.working_set_bytes);
  total.compute_seconds += part.compute_seconds;
  total.memory_seconds += part.memory_seconds;
  total.overhead_seconds += part.overhead_seconds;
  total.seconds += part.seconds;
}

}  // namespace

// A program under fusion decisions: the sum of its kernels, each with its automatic tile. A fused
// kernel's estimate depends on the kernel, not on the config around it, so kernels are built once
// (FusedKernelCache) and estimated once, across predict() calls for the same program.
class FusionScorer {
 public:
  FusionScorer(const AnalyticalModel& model, const Program& program) : model_(model), kernels_(program) {}

  TileEstimate score(const TileChoice& choice) {
    TileEstimate total;
    total.iterations = 0;
    std::vector<std::size_t> parts;
    try {
      parts = kernels_.kernels_fusing(choice.fused_edges);
    } catch (const FusionError&) {
      total.feasible = false;  // an illegal fusion (a cycle) cannot be built
      total.seconds = kInfeasibleSeconds;
      return total;
    }
    for (std::size_t i : parts) {
      if (estimates_.size() <= i) estimates_.resize(kernels_.size());
      if (!estimates_[i]) estimates_[i] = model_.estimate_auto(kernels_.kernel(i));
      accumulate(total, *estimates_[i]);
    }
    return total;
  }

  std::size_t kernels() const { return kernels_.size(); }

 private:
  const AnalyticalModel& model_;
  FusedKernelCache kernels_;
  std::vector<std::optional<TileEstimate>> estimates_;  // per kernel of kernels_
};

FusionScorer& AnalyticalModel::fusion_scorer(const Kernel& program) const {
  auto it = fusion_scorers_.find(program.key());
  // Memory stays bounded on long searches: a scorer that has built kFusionCacheKernels kernels, or
  // a model that has seen kFusionCachePrograms programs, starts over.
  if (it != fusion_scorers_.end() && it->second->kernels() >= kFusionCacheKernels) {
    fusion_scorers_.erase(it);
    it = fusion_scorers_.end();
  }
  if (it == fusion_scorers_.end()) {
    if (fusion_scorers_.size() >= kFusionCachePrograms) fusion_scorers_.clear();
    it = fusion_scorers_.emplace(program.key(), std::make_unique<FusionScorer>(*this, program.body())).first;
  }
  return *it->second;
}

TileEstimate AnalyticalModel::estimate(const Kernel& kernel, const SearchSpace& space, const Config& config) const {
  return estimates(kernel, space, std::span<const Config>(&config, 1)).front();
}

std::vector<TileEstimate> AnalyticalModel::estimates(const Kernel& kernel, const SearchSpace& space,
                                                    std::span<const Config> configs) const {
  std::vector<TileEstimate> out;
  out.reserve(configs.size());
  const KnobPlan plan(space);
  if (plan.fused && plan.tiled) {
    // A multi-op kernel's schedule (fuse.<e> places a producer within the kernel): its tiled
    // estimate, with the recompute of inlined producers and the round trip of those at root.
    const KernelAnalysis analysis(kernel, spec_);
    for (const Config& config : configs) {
      TileEstimate e = evaluate_config(analysis, plan, config);
      if (!e.feasible) {
        out.push_back(e);
        continue;
      }
      const PlacementWork work = placement_work(kernel.body(), plan.roles, config);
      e.compute_seconds *= work.recompute;
      if (e.bytes > 0) e.memory_seconds *= (e.bytes + work.root_bytes) / e.bytes;
      e.bytes += work.root_bytes;
      e.seconds = std::max(e.compute_seconds, e.memory_seconds) + e.overhead_seconds;
      out.push_back(e);
    }
    return out;
  }
  if (plan.fused) {
    const std::lock_guard<std::mutex> lock(fusion_mutex_);
    FusionScorer& scorer = fusion_scorer(kernel);
    for (const Config& config : configs) out.push_back(scorer.score(read_tiles(plan.roles, config, 0)));
    return out;
  }
  const KernelAnalysis analysis(kernel, spec_);
  for (const Config& config : configs) out.push_back(evaluate_config(analysis, plan, config));
  return out;
}

void AnalyticalModel::predict(const Kernel& kernel, const SearchSpace& space, std::span<const Config> configs,
                              std::span<float> log_seconds) {
  if (log_seconds.size() != configs.size())
    throw std::invalid_argument("AnalyticalModel::predict: " + std::to_string(configs.size()) + " configs but " +
                                std::to_string(log_seconds.size()) + " outputs");
  const std::vector<TileEstimate> all = estimates(kernel, space, configs);
  for (std::size_t i = 0; i < configs.size(); ++i) log_seconds[i] = static_cast<float>(std::log(all[i].seconds));
}

std::string device_spec_path(const std::string& device, const std::string& configs_dir) {
  if (device.rfind("tpu", 0) == 0) return configs_dir + "/tpu_v3.json";
  if (device.rfind("cpu", 0) == 0) return configs_dir + "/host.json";
  throw std::invalid_argument("no analytical device spec for device '" + device + "' (expected tpu... or cpu...)");
}

std::string shared_device_spec_path(const std::vector<const MeasuredKernel*>& kernels, const std::string& configs_dir) {
  std::optional<std::string> path;
  for (const MeasuredKernel* kernel : kernels) {
    const std::string spec = device_spec_path(kernel->device, configs_dir);
    if (path && *path != spec)
      throw std::invalid_argument("training kernels of one device spec (found " + *path + " and " + spec + "; set \"analytical_device\")");
    path = spec;
  }
  if (!path) throw std::invalid_argument("training kernels to take the device spec from");
  return *path;
}

}  // namespace perftune
