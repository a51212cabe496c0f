#pragma once
// The schedule a scheduled pipeline carries, read back from Halide's own record of it (each Func's
// compute and store levels, bounds and storage order; each stage's splits, fuses, loop order and
// loop kinds): as Halide C++ source, a function
//   inline void apply_schedule_NAME(::Halide::Pipeline pipeline, ::Halide::Target target)
// in the form Halide's autoschedulers write, and applied again to another pipeline of the same
// algorithm. Both come from the one directive list, so the source says what was compiled
// (tests/halide/ applies it to a fresh lowering and compares the loop nests).
//
// The algorithm is the kernel's lowering (halide/lowering.h) with the output stages the schedule
// added (apply_schedule.h); the Funcs are found by name, and a global wrapper the schedule made
// (Func::in()) is made again.
#include <Halide.h>

#include <string>
#include <vector>

namespace perftune::halide {

struct ScheduleDirective {
  std::string func;          // the Func's name in the pipeline
  int stage = -1;            // -1: a Func-level call; 0: the pure definition; k: update k - 1
  std::string call;          // "compute_root", "compute_at", "store_root", "store_at", "bound",
                             // "reorder_storage", "split", "fuse", "rename", "reorder",
                             // "parallel", "vectorize", "unroll", "wrap" (func = the wrapper, at = the wrapped)
  std::vector<std::string> vars;  // the loop variables it names, in the call's order
  std::vector<bool> rvars;        // per vars entry: an RVar
  std::vector<std::string> exprs;  // split factor, bound min and extent (as Halide prints them)
  std::string at;             // compute_at / store_at: the Func; wrap: the wrapped Func
  std::string tail;           // split: Halide's TailStrategy name
};

// Every directive of `pipeline`'s schedule, Funcs in topological order (producers first).
std::vector<ScheduleDirective> schedule_directives(const Halide::Pipeline& pipeline);

// The directives as apply_schedule_NAME's source.
std::string schedule_source(const std::vector<ScheduleDirective>& directives, const std::string& name);

// Applies the directives to `pipeline` (same algorithm, unscheduled). Throws std::runtime_error
// naming a Func the pipeline does not have.
void apply_directives(const std::vector<ScheduleDirective>& directives, const Halide::Pipeline& pipeline);

}  // namespace perftune::halide
