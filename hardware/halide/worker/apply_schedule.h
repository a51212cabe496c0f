#pragma once
// A HalideSchedule (hardware/halide/halide_schedule.h) applied to a lowered kernel as Halide scheduling
// calls, and the pipeline that results. Each stage at root is tiled
//   split every dimension by its tile; inside the tile: vector lanes (innermost), unrolled rows,
//   then the remaining points; outside: the tile loops (optionally the two innermost swapped), the
//   outermost one (or two, fused) parallel;
// a reduction accumulates in place (its update split the same way, the reduction loops between
// the unrolled rows and the tile's points, the first one split by the reduction tile with its
// outer part outside the points: cache blocking), or in a buffer per register block or per tile
// of a wrapper stage (the classic GEMM micro-kernel: the accumulators stay in registers while the
// reduction loop runs). Producers computed at a tile are vectorized like their consumer.
#include <vector>

#include "hardware/halide/halide_schedule.h"
#include "hardware/halide/worker/lowering.h"

namespace perftune::halide {

struct ScheduledPipeline {
  Halide::Pipeline pipeline;
  std::vector<Halide::Func> outputs;  // one per LoweredKernel::outputs entry
};

// Applies `schedule`; Halide may still reject it when compiling (a CompileError).
ScheduledPipeline apply_schedule(LoweredKernel& lowered, const Program& body, const HalideSchedule& schedule);

// The algorithm apply_schedule schedules, unscheduled: the lowering's Funcs with the output stage
// of each output reduction the schedule accumulates in a buffer of its own (halide/schedule_source.h
// replays a schedule onto it).
ScheduledPipeline schedule_algorithm(LoweredKernel& lowered, const Program& body, const HalideSchedule& schedule);

// The unscheduled pipeline (for the autoschedulers, which schedule it themselves).
ScheduledPipeline unscheduled_pipeline(LoweredKernel& lowered, const Program& body);

}  // namespace perftune::halide
