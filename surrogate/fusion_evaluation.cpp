#include "surrogate/fusion_evaluation.h"

#include <cmath>
#include <limits>
#include <map>
#include <optional>

#include "ir/fusion_placements.h"
#include "ir/knob_roles.h"
#include "surrogate/fused_kernel_cache.h"
#include "surrogate/ranking_metrics.h"

namespace perftune {

std::pair<std::shared_ptr<const SearchSpace>, Config> untiled(const Kernel& kernel) {
  std::vector<std::int64_t> dims;
  if (!kernel.body().empty()) dims = kernel.body().op(kernel.body().root()).shape.dims;
  if (dims.empty()) dims = {1};
  std::vector<Knob> knobs;
  Config config;
  for (std::size_t d = 0; d < dims.size(); ++d) {
    const std::int64_t extent = std::max<std::int64_t>(1, dims[d]);
    knobs.push_back({tile_out_knob(d), {extent}});
    config.values.push_back(extent);
  }
  return {std::make_shared<SearchSpace>(std::move(knobs)), config};
}

bool is_fusion_space(const MeasuredKernel& kernel) {
  if (!kernel.space || kernel.space->knobs().empty()) return false;
  // Only fuse knobs: a schedule space of a multi-op kernel also places its producers (fuse.<e>
  // on the Halide backend) but is a kernel's tile space, trained on and scored as one.
  for (const KnobInfo& info : knob_roles(*kernel.space))
    if (info.role != KnobRole::kFuse) return false;
  return true;
}

std::vector<double> predict_program_seconds(CostModel& model, const MeasuredKernel& program,
                                            std::span<const Config> configs, const KernelTiling& tiling) {
  FusedKernelCache kernels(program.kernel.body());
  const auto roles = knob_roles(*program.space);
  // Per kernel of the cache, its schedule space and schedule (built when first asked).
  std::vector<std::optional<std::pair<std::shared_ptr<const SearchSpace>, Config>>> schedules;
  // Predicted seconds per kernel content and schedule: kernels of equal content (a repeated layer)
  // scheduled alike share one prediction.
  std::map<std::pair<std::string, Config>, double> seconds_of;
  std::vector<double> out;
  out.reserve(configs.size());
  for (const Config& config : configs) {
    double total = 0.0;
    for (std::size_t i : kernels.kernels_fusing(read_tiles(roles, config, 0).fused_edges)) {
      if (schedules.size() <= i) schedules.resize(kernels.size());
      const Kernel& kernel = kernels.kernel(i);
      if (!schedules[i]) schedules[i] = tiling(kernel);
      const auto& [space, base] = *schedules[i];
      // Where the config says how a fused producer is computed (inlined or per tile), so does
      // the kernel's schedule.
      const Config schedule = with_program_placements(kernel, *space, base, program.kernel.body(), *program.space, config);
      auto it = seconds_of.find({kernel.key(), schedule});
      if (it == seconds_of.end()) {
        float log_seconds = 0.0f;
        model.predict(kernel, *space, std::span<const Config>(&schedule, 1), std::span<float>(&log_seconds, 1));
        it = seconds_of.emplace(std::make_pair(kernel.key(), schedule), std::exp(static_cast<double>(log_seconds))).first;
      }
      total += it->second;
    }
    out.push_back(total);
  }
  return out;
}

std::optional<ModelScores> score_fusion(CostModel& model, const MeasuredKernel& program, const KernelTiling& tiling) {
  const auto [configs, measured] = ok_configs(program);
  if (configs.size() < 2) return std::nullopt;
  const std::vector<double> predicted = predict_program_seconds(model, program, configs, tiling);
  return ModelScores{kendall_tau(predicted, measured), top_k_slowdown(predicted, measured, 1),
                     top_k_slowdown(predicted, measured, 5), top_k_slowdown(predicted, measured, 10),
                     mean_absolute_percentage_error(predicted, measured)};
}

}  // namespace perftune
