#include "autotuner/campaign/program_target.h"

#include "hardware/halide/cpu_program.h"
#include "hardware/halide/fusion_space.h"
#include "hardware/halide/halide_schedule.h"
#include "ir/file_io.h"
#include "ir/fusion.h"
#include "ir/input_error.h"
#include "search/legality_cache.h"

namespace perftune {

namespace {

ProgramTarget fusion_target(const Program& program) {
  ProgramTarget target;
  target.kernel = Kernel(program.name(), program);
  // Legality is checked on every move search tries; the answers are remembered across rounds.
  target.space = std::make_shared<SearchSpace>(with_legality_cache(fusion_space(program, FusionChoices::kPlacements)));
  target.defaults.emplace_back("no_fusion", fusion_space_config(program, *target.space, FusionConfig::none(program)));
  target.defaults.emplace_back("greedy_elementwise", fusion_space_config(program, *target.space, greedy_cpu_fusion(program)));
  return target;
}

Program target_program(const Campaign& campaign) {
  const std::string& path = campaign.source.program;
  if (!path_exists(path)) throw InputError(campaign.file, "$.source.program", "a program file, but " + path + " does not exist");
  return load_cpu_program(path);
}

}  // namespace

ProgramTarget program_target(const Campaign& campaign) {
  const Program program = target_program(campaign);
  if (campaign.source.kernel == "fusion") return fusion_target(program);
  if (campaign.source.kernel == "program") {
    // The whole program as one kernel: where each producer is computed and the root's schedule,
    // tuned together.
    ProgramTarget target;
    target.kernel = Kernel(program.name(), program);
    target.space = std::make_shared<SearchSpace>(with_legality_cache(halide_schedule_space(target.kernel)));
    target.defaults.emplace_back("unscheduled", unscheduled_config(*target.space, target.kernel));
    target.defaults.emplace_back("heuristic", heuristic_config(*target.space, target.kernel));
    return target;
  }

  // "greedy:NAME": a kernel of XLA's greedy elementwise fusion (an XLA module's fused kernels);
  // otherwise a kernel of the unfused program.
  const bool greedy = campaign.source.kernel.starts_with("greedy:");
  const std::string wanted = greedy ? campaign.source.kernel.substr(7) : campaign.source.kernel;
  std::string available;
  if (const auto kernel = find_partition_kernel(program, greedy ? FusionConfig::greedy_elementwise(program) : FusionConfig::none(program),
                                                wanted, &available)) {
    ProgramTarget target;
    target.kernel = *kernel;
    target.space = std::make_shared<SearchSpace>(halide_schedule_space(*kernel));
    target.defaults.emplace_back("unscheduled", unscheduled_config(*target.space, *kernel));
    target.defaults.emplace_back("heuristic", heuristic_config(*target.space, *kernel));
    return target;
  }
  throw InputError(campaign.file, "$.source.kernel",
                   "\"fusion\", \"program\", the name of a kernel of " + campaign.source.program + " unfused, or \"greedy:\" and the name of one under greedy fusion; " + (greedy ? "greedy" : "unfused") + ": " + available);
}

}  // namespace perftune
