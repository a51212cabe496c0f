#pragma once
// The tiles the CPU fusion studies score a program's kernels with, shared by `perftune eval` and
// the model-study mode of `perftune experiment`.
#include <memory>
#include <utility>

#include "ir/config.h"
#include "ir/kernel.h"
#include "ir/search_space.h"

namespace perftune::cli {

// The Halide backend's schedule for a kernel inside a fused program, with its schedule space;
// untiled when the backend cannot lower the kernel. A surrogate/fusion/fusion_evaluation.h KernelTiling.
std::pair<std::shared_ptr<const SearchSpace>, Config> cpu_default_tiling(const Kernel& kernel);

}  // namespace perftune::cli
