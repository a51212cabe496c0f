#include "cli/cpu_tiling.h"

#include "hardware/cpu_tile_space.h"
#include "hardware/op_semantics.h"
#include "surrogate/fusion_evaluation.h"

namespace perftune::cli {

// The fusion task's kernels run with the tiles the CPU backend gives a kernel inside a fused
// program (hardware/cpu_codegen.cpp: default_tiles), so the summed prediction scores the configs the
// collector measured; the CPU backend is the one that measures fusion configs. A kernel the CPU
// code generator cannot tile is scored untiled.
std::pair<std::shared_ptr<const SearchSpace>, Config> cpu_default_tiling(const Kernel& kernel) {
  try {
    auto space = std::make_shared<const SearchSpace>(cpu_tile_space(kernel));
    Config config = default_tile_config(kernel, *space);
    return {std::move(space), std::move(config)};
  } catch (const UnsupportedProgram&) {
    return untiled(kernel);
  }
}

}  // namespace perftune::cli
