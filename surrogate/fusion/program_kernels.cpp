#include "surrogate/fusion/program_kernels.h"

#include "ir/fusion_placements.h"

namespace perftune {

ProgramKernels::ProgramKernels(const MeasuredKernel& program, const KernelTiling& tiling)
    : program_(program), tiling_(tiling), kernels_(program.kernel.body()), roles_(knob_roles(*program.space)) {}

std::vector<ProgramKernels::Term> ProgramKernels::terms(const Config& config) {
  std::vector<Term> out;
  for (std::size_t i : kernels_.kernels_fusing(read_tiles(roles_, config, 0).fused_edges)) {
    if (schedules_.size() <= i) schedules_.resize(kernels_.size());
    const Kernel& kernel = kernels_.kernel(i);
    if (!schedules_[i]) schedules_[i] = tiling_(kernel);
    const auto& [space, base] = *schedules_[i];
    // Where the config says how a fused producer is computed (inlined or per tile), so does the
    // kernel's schedule.
    out.push_back({i, with_program_placements(kernel, *space, base, program_.kernel.body(), *program_.space, config)});
  }
  return out;
}

}  // namespace perftune
