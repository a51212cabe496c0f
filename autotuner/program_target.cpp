#include "autotuner/program_target.h"

#include "hardware/fusion_space.h"
#include "hardware/halide_schedule.h"
#include "ir/file_io.h"
#include "ir/fusion.h"
#include "ir/input_error.h"
#include "ir/program_json.h"
#include "search/legality_cache.h"

namespace perftune {

namespace {

// XLA's greedy elementwise fusion, trimmed to what the CPU backend can run: edges are dropped
// from the last one until the partition is one fusion_space allows.
FusionConfig greedy_cpu_fusion(const Program& program) {
  FusionConfig greedy = FusionConfig::greedy_elementwise(program);
  for (std::size_t e = greedy.fused.size(); e-- > 0 && !is_cpu_fusible(program, greedy);) greedy.fused[e] = false;
  return greedy;
}

ProgramTarget fusion_target(const Program& program) {
  ProgramTarget target;
  target.kernel = Kernel(program.name(), program);
  // Legality is checked on every move search tries; the answers are remembered across rounds.
  target.space = std::make_shared<SearchSpace>(with_legality_cache(fusion_space(program, FusionChoices::kPlacements)));
  target.defaults.emplace_back("no_fusion", fusion_space_config(program, *target.space, FusionConfig::none(program)));
  target.defaults.emplace_back("greedy_elementwise", fusion_space_config(program, *target.space, greedy_cpu_fusion(program)));
  return target;
}

}  // namespace

ProgramTarget program_target(const Campaign& campaign) {
  if (!path_exists(campaign.source.program))
    throw InputError(campaign.file, "$.source.program", "a program file, but " + campaign.source.program + " does not exist");
  const Program program = load_program_file(campaign.source.program);
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

  const FusionPlan plan = partition(program, FusionConfig::none(program));
  std::string available;
  for (const FusedKernel& fused : plan.kernels) {
    available += (available.empty() ? "" : ", ") + fused.kernel.name();
    if (fused.kernel.name() != campaign.source.kernel && fused.kernel.key() != campaign.source.kernel) continue;
    ProgramTarget target;
    target.kernel = fused.kernel;
    target.space = std::make_shared<SearchSpace>(halide_schedule_space(fused.kernel));
    target.defaults.emplace_back("unscheduled", unscheduled_config(*target.space, fused.kernel));
    target.defaults.emplace_back("heuristic", heuristic_config(*target.space, fused.kernel));
    return target;
  }
  throw InputError(campaign.file, "$.source.kernel",
                   "\"fusion\", \"program\" or the name of a kernel of " + campaign.source.program + " (unfused): " + available);
}

}  // namespace perftune
