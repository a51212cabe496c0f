#include "cli/cpu_tiling.h"

#include "hardware/halide/halide_schedule.h"
#include "hardware/reference/op_semantics.h"
#include "surrogate/fusion/fusion_evaluation.h"

namespace perftune::cli {

// The fusion task's kernels run with the schedule the Halide backend gives a group inside a fused
// program (halide_schedule.h: heuristic_stage), so the summed prediction scores the configs the
// collector measured. A kernel the backend cannot lower is scored untiled.
std::pair<std::shared_ptr<const SearchSpace>, Config> cpu_default_tiling(const Kernel& kernel) {
  try {
    auto space = std::make_shared<const SearchSpace>(halide_schedule_space(kernel));
    Config config = heuristic_config(*space, kernel);
    return {std::move(space), std::move(config)};
  } catch (const UnsupportedProgram&) {
    return untiled(kernel);
  }
}

}  // namespace perftune::cli
