#pragma once
// What a config's schedule becomes: statistics of the loop nest Halide lowers it to (after
// vectorization, unrolling and the parallel loops' closures; no code generation), each count
// weighted by how often its statement runs. Adams2019's cost model and TVM's XGBoost model read
// such loop-nest features; perftune's own features only see the knobs. Lowering takes tens of
// milliseconds per config, so they suit ranking a few hundred candidates, not a search's inner loop.
//
// The Halide worker computes them (a "loop_nest" request, hardware/halide/worker/halide_runner.cpp and
// hardware/halide/worker/loop_nest_stats.h), so the tuner still never links Halide, and a schedule that
// crashes the compiler costs one row, not the process.
#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ir/program.h"

namespace perftune {

class WorkerProcess;

// Row order. Counts are log1p of executions (a statement inside loops of extents 4 and 8 counts 32);
// the two fractions are plain.
enum LoopNestFeature : std::size_t {
  kNestLaneOps,            // arithmetic, each vector op counted per lane
  kNestVectorOps,          // arithmetic on vectors
  kNestScalarOps,          // arithmetic on scalars
  kNestStaticOps,          // arithmetic nodes in the code (unrolling multiplies them)
  kNestMaxLanes,           // widest vector (log1p)
  kNestDenseLoads,         // vector loads of consecutive elements
  kNestStridedLoads,       // vector loads with a constant stride > 1
  kNestGatherLoads,        // vector loads of arbitrary indices
  kNestScalarLoads,
  kNestLoadBytes,
  kNestInternalLoadBytes,  // from buffers the pipeline allocates
  kNestInputLoadBytes,     // from inputs and outputs
  kNestDenseStores,
  kNestOtherStores,        // strided or scattered vector stores
  kNestScalarStores,
  kNestStoreBytes,
  kNestLoopIterations,     // of every loop
  kNestInnermostIterations,
  kNestStaticLoops,        // loops in the code
  kNestParallelLaunches,   // times a parallel loop starts (each a fork and join of the thread pool)
  kNestParallelTasks,      // parallel loop iterations, summed over launches
  kNestParallelMaxExtent,  // the widest parallel loop
  kNestParallelOps,        // arithmetic inside parallel loops
  kNestOpsPerTask,         // parallel arithmetic per task (all arithmetic when nothing is parallel)
  kNestAllocations,        // executions of allocations
  kNestMaxAllocationBytes,
  kNestAllocatedBytes,     // summed over executions
  kNestHeapAllocations,    // executions of allocations above 16 KiB or on the heap
  kNestBranches,           // if-then-else executions (loop tails, boundary guards)
  kNestSelects,
  kNestUnknownExtents,     // loops whose extent has no constant bound (counted once each)
  kNestProducers,          // producer blocks in the code (stages computed somewhere)
  kNestInnermostBodyOps,   // statements in innermost loop bodies, weighted by their iterations
  kNestVectorFraction,     // vector ops / all ops
  kNestParallelFraction,   // ops inside parallel loops / all ops
  kLoopNestFeatureCount
};

inline constexpr std::array<std::string_view, kLoopNestFeatureCount> kLoopNestFeatureNames = {
    "lane_ops",        "vector_ops",          "scalar_ops",         "static_ops",        "max_lanes",
    "dense_loads",     "strided_loads",       "gather_loads",       "scalar_loads",      "load_bytes",
    "internal_load_bytes", "input_load_bytes", "dense_stores",      "other_stores",      "scalar_stores",
    "store_bytes",     "loop_iterations",     "innermost_iterations", "static_loops",    "parallel_launches",
    "parallel_tasks",  "parallel_max_extent", "parallel_ops",       "ops_per_task",      "allocations",
    "max_allocation_bytes", "allocated_bytes", "heap_allocations",  "branches",          "selects",
    "unknown_extents", "producers",           "innermost_body_ops", "vector_fraction",   "parallel_fraction"};

struct LoopNestOptions {
  std::vector<std::string> runner;  // the Halide worker's argv prefix; empty: the one built beside perftune
  int workers = 2;                  // lowering is single-threaded: one worker per core
  double timeout_seconds = 60;      // per config
};

// Lowers configs in Halide workers and returns their loop-nest rows. Thread-compatible: one call
// at a time.
class LoopNestFeaturizer {
 public:
  // Throws std::runtime_error if the worker executable does not exist.
  explicit LoopNestFeaturizer(LoopNestOptions options = {});
  ~LoopNestFeaturizer();

  // schedules.size() x kLoopNestFeatureCount floats, row-major. A schedule the worker rejects,
  // cannot lower, or crashes or hangs on gets a row of NaN (missing values, to a tree model).
  std::vector<float> rows(const Program& body, std::span<const std::map<std::string, std::int64_t>> schedules);
  std::size_t failed_rows() const { return failed_rows_; }

 private:
  LoopNestOptions options_;
  std::vector<std::unique_ptr<WorkerProcess>> workers_;
  std::size_t failed_rows_ = 0;
};

}  // namespace perftune
