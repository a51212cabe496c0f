#include "surrogate/fusion_evaluation.h"

#include <cmath>
#include <limits>
#include <unordered_map>

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
  if (!kernel.space) return false;
  for (const KnobInfo& info : knob_roles(*kernel.space))
    if (info.role == KnobRole::kFuse) return true;
  return false;
}

std::vector<double> predict_program_seconds(CostModel& model, const MeasuredKernel& program,
                                            std::span<const Config> configs, const KernelTiling& tiling) {
  FusedKernelCache kernels(program.kernel.body());
  const auto roles = knob_roles(*program.space);
  // Per kernel of the cache, its predicted seconds (NaN until asked); kernels of equal content
  // (a repeated layer) share one prediction through their key.
  std::vector<double> seconds;
  std::unordered_map<std::string, double> seconds_of_key;
  std::vector<double> out;
  out.reserve(configs.size());
  for (const Config& config : configs) {
    double total = 0.0;
    for (std::size_t i : kernels.kernels_fusing(read_tiles(roles, config, 0).fused_edges)) {
      if (seconds.size() <= i) seconds.resize(kernels.size(), std::numeric_limits<double>::quiet_NaN());
      if (std::isnan(seconds[i])) {
        const Kernel& kernel = kernels.kernel(i);
        auto it = seconds_of_key.find(kernel.key());
        if (it == seconds_of_key.end()) {
          const auto [space, tile] = tiling(kernel);
          float log_seconds = 0.0f;
          model.predict(kernel, *space, std::span<const Config>(&tile, 1), std::span<float>(&log_seconds, 1));
          it = seconds_of_key.emplace(kernel.key(), std::exp(static_cast<double>(log_seconds))).first;
        }
        seconds[i] = it->second;
      }
      total += seconds[i];
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
