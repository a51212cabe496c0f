#include "surrogate/fusion/fusion_evaluation.h"

#include <cmath>
#include <limits>
#include <map>
#include <optional>

#include "ir/knob_roles.h"
#include "surrogate/evaluation/ranking_metrics.h"

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

bool is_fusion_space(const MeasuredKernel& kernel) { return kernel.space && is_fusion_space(*kernel.space); }

namespace {

// Predicts each distinct kernel content and schedule once (a repeated layer scheduled alike
// shares one prediction).
class ProgramPredictor {
 public:
  ProgramPredictor(CostModel& model, const MeasuredKernel& program, const KernelTiling& tiling)
      : model_(model), kernels_(program, tiling) {}

  // The config's kernels in partition()'s order, each with its predicted seconds.
  std::vector<KernelPrediction> kernels(const Config& config) {
    std::vector<KernelPrediction> out;
    for (const ProgramKernels::Term& term : kernels_.terms(config)) {
      const Kernel& kernel = kernels_.kernel(term.kernel);
      auto it = seconds_of_.find({kernel.key(), term.schedule});
      if (it == seconds_of_.end()) {
        float log_seconds = 0.0f;
        model_.predict(kernel, kernels_.space(term.kernel), std::span<const Config>(&term.schedule, 1), std::span<float>(&log_seconds, 1));
        it = seconds_of_.emplace(std::make_pair(kernel.key(), term.schedule), std::exp(static_cast<double>(log_seconds))).first;
      }
      out.push_back({kernel.name(), it->second});
    }
    return out;
  }

 private:
  CostModel& model_;
  ProgramKernels kernels_;
  std::map<std::pair<std::string, Config>, double> seconds_of_;
};

}  // namespace

std::vector<std::vector<KernelPrediction>> predict_program_kernels(CostModel& model, const MeasuredKernel& program,
                                                                   std::span<const Config> configs, const KernelTiling& tiling) {
  ProgramPredictor predictor(model, program, tiling);
  std::vector<std::vector<KernelPrediction>> out;
  out.reserve(configs.size());
  for (const Config& config : configs) out.push_back(predictor.kernels(config));
  return out;
}

double program_seconds(const std::vector<KernelPrediction>& kernels) {
  double total = 0.0;
  for (const KernelPrediction& kernel : kernels) total += kernel.seconds;
  return total;
}

std::vector<double> program_seconds(const std::vector<std::vector<KernelPrediction>>& kernels_per_config) {
  std::vector<double> out;
  out.reserve(kernels_per_config.size());
  for (const std::vector<KernelPrediction>& kernels : kernels_per_config) out.push_back(program_seconds(kernels));
  return out;
}

std::vector<double> predict_program_seconds(CostModel& model, const MeasuredKernel& program,
                                            std::span<const Config> configs, const KernelTiling& tiling) {
  return program_seconds(predict_program_kernels(model, program, configs, tiling));
}

std::optional<ModelScores> score_fusion(CostModel& model, const MeasuredKernel& program, const KernelTiling& tiling) {
  const auto [configs, measured] = ok_configs(program);
  if (configs.size() < 2) return std::nullopt;
  if (!model.predicts_absolute_time()) return score_cost_model(model, program);
  const std::vector<double> predicted = predict_program_seconds(model, program, configs, tiling);
  return ModelScores{kendall_tau(predicted, measured), top_k_slowdown(predicted, measured, 1),
                     top_k_slowdown(predicted, measured, 5), top_k_slowdown(predicted, measured, 10),
                     mean_absolute_percentage_error(predicted, measured)};
}

}  // namespace perftune
