#pragma once
// The analytical baseline: a tiled roofline model over a DeviceSpec, behind the CostModel interface
// ("analytical" in `perftune eval`). No training; update() is a no-op.
//
// For a kernel and a tile config it counts, per tile and in total:
//   * FLOPs including padding waste: every array is stored and computed in whole vector registers
//     (TPU: (8,128) tiles on its minor two physical dims; CPU: whole vectors on the minor dim),
//     matrix ops in whole matrix-unit passes (TPU MXU 128x128 on contraction and output features),
//     and a tile that does not divide its dimension computes the remainder as a full tile;
//   * bytes moved between memory and chip: each input is fetched once per change of the block it
//     needs (an input that does not vary along the inner loop dimensions stays resident, as TPU
//     pipelining and CPU caches keep it; loops of one tile change nothing), each output block
//     written whenever the loop nest leaves it, and read back when a reduction revisits it (its
//     reduced loops are not the innermost) -- a revisit also costs one unoverlapped pipeline step;
//   * tile iterations (times the per-iteration overhead) and one launch overhead;
//   * the on-chip working set: inputs and outputs blocks (double-buffered on a scratchpad device)
//     plus the matrix accumulator. Above a scratchpad's capacity the tile does not compile: it is
//     scored kInfeasibleSeconds scaled by the overflow, far slower than any feasible tile, so it is
//     never ranked first while a feasible one exists. Above a cache's capacity (CPU) the tile runs
//     but loses its reuse: matrix operands stream from memory once per multiply-add.
// Time = max(compute, memory) + the exposed first load and last store + overheads (roofline with
// double buffering). Loop order: TPU physical major to minor (output_bounds order), CPU logical
// row-major with the reduction innermost.
//
// Knobs (ir/knob_roles.h): tile.out.<d> as DeviceSpec::tile_knob_units says, tile.red on CPU,
// tile.kernel.<d> (XLA's kernel_bounds, as the TPU importer names them: a block of the convolution
// kernel / dot rhs, same units and order as output_bounds; splitting its window or feature dims
// splits the contraction into passes, each padded to whole tiles),
// fuse.<e> partitions the body (ir/fusion.h) and sums the kernels, each with an automatic tile (the
// largest that fits on chip); a fused edge therefore saves its intermediate's round trip to memory.
// On a CPU spec (kind "cpu") the loop-nest knobs of the root stage count too, as the Halide
// backend applies them (hardware/halide/halide_schedule.h):
//   * vector, vector.dim: the lanes' dimension is padded to whole vectors of `vector` lanes, and
//     compute runs at the fraction of the FMA peak those lanes fill (1 = scalar: one lane);
//   * unroll: the main matrix op's register block of `unroll` rows by vector/lanes registers. Its
//     accumulators hide the FMA latency only when there are kFmaChains of them; each reduction step
//     loads one vector per register and broadcasts one scalar per row, two loads per two FMAs; a
//     block larger than the register file spills;
//   * parallel: tasks = the tile counts of the one or two outermost tile loops, spread over
//     DeviceSpec::cores (the busiest core sets the time); each parallel loop costs a fork-join and
//     each task a dispatch. Memory time is not divided: the spec holds one core's bandwidth only;
//   * order: the two innermost tile loops swap, which changes the blocks re-fetched.
// Any other knob is ignored: configs that differ only in generic knobs get the same prediction.
//
// What XLA's TPU output_bounds mean (established by decoding op_tuning_data.pb and comparing every
// kernel's recorded bounds with its shapes and layouts; see DeviceSpec::TileKnobUnits):
//   * output_bounds has one entry per dimension of the kernel's ITERATION shape, which is the
//     convolution/dot output in an output fusion and otherwise the largest array the fusion
//     computes (e.g. fusion.232 roots in a reduce to f32[192] but its bounds have rank 4: they tile
//     the select f32[32,26,26,192] feeding the reduce);
//   * entries are in PHYSICAL order, major to minor (reversed minor_to_major): f32[32,26,26,192]
//     with layout {3,0,2,1} is physically [26,26,32,192], and its bounds never exceed [26,26,4,2];
//   * the minor-most entry counts 128-lane tiles, the second minor-most 8-sublane tiles, the rest
//     elements: 32 rows = 4 tiles of 8, 192 lanes = 2 tiles of 128 (the second one half padding);
//     f32[4096,1000]{0,1} is physically [1000,4096] and its bounds reach [125,32] = [1000/8,
//     4096/128]; a rank-1 f32[4096] counts 1024-element tiles (bounds 1 or 4).
//   Checked on all 12 tiled kernels of the file; 3 reshape kernels have empty bounds.
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "ir/device_spec.h"
#include "ir/knob_roles.h"
#include "surrogate/analytical/op_cost.h"
#include "surrogate/cost_model.h"

namespace perftune {

// Scale of an infeasible tile's score (seconds): 1000 s, beyond any single kernel's runtime.
inline constexpr double kInfeasibleSeconds = 1e3;

// The breakdown of one estimate (tests, reports, debugging).
struct TileEstimate {
  bool feasible = true;
  std::vector<std::int64_t> tile;    // elements per logical dim of the iteration shape
  std::int64_t iterations = 1;       // tile iterations, reduction tiles included
  double useful_flops = 0.0;         // unpadded, untiled (op_cost.h)
  double padded_flops = 0.0;         // what the hardware executes, padding and recompute included
  double matrix_flops = 0.0;         // padded, on the matrix unit
  double vector_flops = 0.0;         // padded, on the vector unit
  double bytes = 0.0;                // memory traffic, re-fetches and padding included
  double working_set_bytes = 0.0;    // on chip per iteration
  double compute_seconds = 0.0;
  double memory_seconds = 0.0;
  double overhead_seconds = 0.0;     // launch + iterations x tile overhead + exposed load/store (+ parallel dispatch)
  double register_efficiency = 1.0;  // CPU loop nest: the fraction of the FMA peak its register block reaches
  std::int64_t parallel_tasks = 1;   // CPU loop nest: iterations of its parallel loop
  double cores_used = 1.0;           // tasks over the busiest core's share of them
  double seconds = 0.0;              // the prediction
};

// The CPU loop-nest knobs of a config (ir/knob_roles.h).
struct LoopNest {
  std::int64_t vector = 1;  // lanes
  int vector_dim = -1;      // the iteration dimension the lanes run along; -1 = the innermost
  std::int64_t unroll = 1;  // rows of the register block
  int parallel = 0;         // 0 serial, 1 or 2 outermost tile loops parallel
  int order = 0;            // 1 = the two innermost tile loops swapped
};

// Accumulators that keep the FMA pipes busy: a latency of about 4 cycles on up to two FMA pipes.
inline constexpr double kFmaChains = 8.0;
// Halide's thread pool: waking the workers and joining them for one parallel loop, and handing
// out one task. Orders of magnitude, not calibrated: they only keep a parallel loop off tiny kernels.
inline constexpr double kForkJoinSeconds = 5e-6;
inline constexpr double kTaskSeconds = 2e-7;

// What a config asks for, in elements.
struct TileRequest {
  std::vector<std::int64_t> out;     // per dim of the iteration shape; 0 = whole dim
  std::int64_t reduction = 0;        // tile.red: elements of the contraction per pass; 0 = whole
  std::vector<std::int64_t> kernel;  // per dim of the main matrix op's kernel operand; 0 = whole
  std::optional<LoopNest> loops;     // CPU: the root stage's loop nest; none = whole vectors, serial
};

class KernelAnalysis;  // per-kernel precomputation (iteration shape, dimension links)
struct KnobPlan;       // a space's knobs read through the convention
class FusionScorer;    // a program's fused kernels and their estimates, kept across calls

// Bounds of the fusion scorers' memory: a Kernel of a few ops is a few KB, so 4096 kernels of a
// program stay in the tens of MB however long a search runs; 16 programs cover every bundled
// program and a TPU module at once.
inline constexpr std::size_t kFusionCacheKernels = 4096;
inline constexpr std::size_t kFusionCachePrograms = 16;

class AnalyticalModel : public CostModel {
 public:
  explicit AnalyticalModel(DeviceSpec spec);
  ~AnalyticalModel() override;

  std::string name() const override { return "analytical"; }
  // log(seconds) per config; kernels without any recognised knob get one constant value.
  void predict(const Kernel& kernel, const SearchSpace& space, std::span<const Config> configs,
               std::span<float> log_seconds) override;
  const DeviceSpec& spec() const { return spec_; }

  // The estimate for one config of `kernel`'s space.
  TileEstimate estimate(const Kernel& kernel, const SearchSpace& space, const Config& config) const;
  // estimate() for many configs of one space, the kernel analysed once (what predict() does, with
  // the breakdown kept: the learned model's hybrid features read it, surrogate/analytical/analytical_features.h).
  // A fusion space's kernels are built and estimated once per program and kept for later calls
  // (bounded by kFusionCacheKernels and kFusionCachePrograms); thread-safe.
  std::vector<TileEstimate> estimates(const Kernel& kernel, const SearchSpace& space, std::span<const Config> configs) const;
  // One unfused kernel tiled with `tile` elements per dim of its iteration shape (0 = whole dim),
  // and `reduction_tile` elements of its contraction (0 = whole).
  TileEstimate estimate_tiles(const Kernel& kernel, const std::vector<std::int64_t>& tile,
                              std::int64_t reduction_tile = 0) const;
  // The largest tile that fits on chip (halving the outermost dims first), and its estimate.
  TileEstimate estimate_auto(const Kernel& kernel) const;

  // The array whose dims tile.out knobs and tiles refer to (dims and layout); an empty f32 scalar
  // for a kernel without ops.
  Shape iteration_shape(const Kernel& kernel) const;

 private:
  TileEstimate evaluate(const KernelAnalysis& analysis, const TileRequest& request) const;
  TileEstimate evaluate_auto(const KernelAnalysis& analysis) const;
  TileEstimate evaluate_config(const KernelAnalysis& analysis, const KnobPlan& plan, const Config& config) const;
  // The scorer of a whole-program kernel (by content key), made on first use; fusion_mutex_ held.
  FusionScorer& fusion_scorer(const Kernel& program) const;

  DeviceSpec spec_;
  // Estimates are pure functions of (spec, kernel), so caching them keeps estimate() const.
  mutable std::mutex fusion_mutex_;
  mutable std::map<std::string, std::unique_ptr<FusionScorer>> fusion_scorers_;
};

// The shipped spec for a record's device string, under `configs_dir` (the project's
// configs/hardware): "tpu..." -> tpu_v3.json (the TPU data does not name its generation; the
// three specs rank it alike, see bench/analytical_report.cpp), "cpu..." -> host.json (written by
// `perftune calibrate`). Throws std::invalid_argument for any other device.
std::string device_spec_path(const std::string& device, const std::string& configs_dir = "configs/hardware");

// The one shipped spec of every kernel's device (a hybrid model's analytical feature needs one).
// Throws std::invalid_argument for a device without a spec, or devices of two different specs.
std::string shared_device_spec_path(const std::vector<const MeasuredKernel*>& kernels, const std::string& configs_dir);

}  // namespace perftune
