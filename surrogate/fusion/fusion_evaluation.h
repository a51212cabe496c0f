#pragma once
// The fusion task: a program measured under fusion configs (a MeasuredKernel whose space has
// fuse.<e> knobs over the program's edges). A model ranks the configs by the program runtime it
// predicts as the sum of its kernels' predicted runtimes (ARCHITECTURE.md, "The two tasks").
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "ir/corpus.h"
#include "surrogate/cost_model.h"
#include "surrogate/evaluation/model_evaluation.h"
#include "surrogate/fusion/program_kernels.h"

namespace perftune {

// One tile.out.<d> knob per output dimension set to the full extent (one tile: the kernel untiled);
// the tiling to use when no backend says otherwise.
std::pair<std::shared_ptr<const SearchSpace>, Config> untiled(const Kernel& kernel);

// True if the kernel's space is a whole program's fusion space (ir/knob_roles.h's is_fusion_space).
bool is_fusion_space(const MeasuredKernel& kernel);

// One kernel of a program under a fusion config, and the runtime a model predicts for it.
struct KernelPrediction {
  std::string name;
  double seconds = 0.0;
};

// The program's kernels under each config: partition (ir/fusion.h), each kernel built once
// (FusedKernelCache), scheduled by `tiling` with its fused producers placed as the config places
// them (ir/fusion_placements.h), in partition()'s order with exp(predicted log seconds), predicted
// once per distinct kernel key and schedule. What a model thinks each kernel of a placement costs
// (`perftune eval --fusion-breakdown`). Throws FusionError for a config that does not partition.
std::vector<std::vector<KernelPrediction>> predict_program_kernels(CostModel& model, const MeasuredKernel& program,
                                                                   std::span<const Config> configs, const KernelTiling& tiling);

// The program runtime under each config predicted as the sum of predict_program_kernels()' terms.
double program_seconds(const std::vector<KernelPrediction>& kernels);
std::vector<double> program_seconds(const std::vector<std::vector<KernelPrediction>>& kernels_per_config);
std::vector<double> predict_program_seconds(CostModel& model, const MeasuredKernel& program,
                                            std::span<const Config> configs, const KernelTiling& tiling);

// Tau, top-K slowdown and MAPE of the summed prediction over the program's successful fusion
// measurements; nullopt with fewer than two. A model that only ranks (predicts_absolute_time()
// false: its scores do not add up) scores the whole program's configs directly, as a live tuner of
// the fusion space asks it, without a MAPE.
std::optional<ModelScores> score_fusion(CostModel& model, const MeasuredKernel& program, const KernelTiling& tiling);

}  // namespace perftune
