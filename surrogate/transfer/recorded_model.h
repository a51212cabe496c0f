#pragma once
// A "model" that knows the answer on another device: it predicts each config's log runtime as
// measured in a recording of the same kernel (e.g. a Kernel Tuner cache of another GPU). It is a
// reference, not a learned model: with the recordings of the source devices as the priors of a
// residual (surrogate/transfer/target_residual.h) it shows what perfect per-source models would give, so an
// experiment can say how far its learned priors are from that
// (experiments/results/gpu_transfer/README.md, gpu_transfer_ceiling). Configs are matched by knob
// name and value, so the target's space may order its
// knobs differently.
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "surrogate/cost_model.h"

namespace perftune {

class RecordedTimesModel : public CostModel {
 public:
  // `recording` must hold a search space and at least one successful measurement (else
  // std::invalid_argument).
  explicit RecordedTimesModel(std::shared_ptr<const MeasuredKernel> recording);

  std::string name() const override { return "recorded:" + recording_->device; }
  // The recorded log seconds of each config; a config that failed there counts as the slowest
  // successful one (as the residual counts failures), one not recorded (or with a knob the
  // recording lacks) as the recording's median, saying nothing either way. Thread-safe.
  void predict(const Kernel& kernel, const SearchSpace& space, std::span<const Config> configs,
               std::span<float> log_seconds) override;

 private:
  std::shared_ptr<const MeasuredKernel> recording_;
  std::vector<std::string> knob_names_;                             // the recording's knob order
  std::unordered_map<Config, double, ConfigHash> log_seconds_;      // in that order
  double slowest_ = 0.0;
  double median_ = 0.0;
};

}  // namespace perftune
