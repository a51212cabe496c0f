#include "surrogate/transfer/recorded_model.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace perftune {

RecordedTimesModel::RecordedTimesModel(std::shared_ptr<const MeasuredKernel> recording) : recording_(std::move(recording)) {
  if (!recording_ || !recording_->space) throw std::invalid_argument("a recorded-times model needs a recording with a search space");
  knob_names_ = recording_->space->knob_names();
  std::vector<double> ok;
  for (const Measurement& m : recording_->measurements)
    if (m.result.ok() && m.result.seconds > 0) ok.push_back(std::log(m.result.seconds));
  if (ok.empty()) throw std::invalid_argument("a recorded-times model needs a successful measurement (" + recording_->device + ")");
  std::sort(ok.begin(), ok.end());
  slowest_ = ok.back();
  median_ = ok[ok.size() / 2];
  for (const Measurement& m : recording_->measurements)
    log_seconds_[m.config] = m.result.ok() && m.result.seconds > 0 ? std::log(m.result.seconds) : slowest_;
}

void RecordedTimesModel::predict(const Kernel&, const SearchSpace& space, std::span<const Config> configs,
                                 std::span<float> log_seconds) {
  // Where each of the recording's knobs sits in the target's configs.
  const std::vector<std::string> target_names = space.knob_names();
  std::vector<std::size_t> position;
  bool matched = target_names.size() == knob_names_.size();
  for (const std::string& name : knob_names_) {
    const auto it = std::find(target_names.begin(), target_names.end(), name);
    matched = matched && it != target_names.end();
    position.push_back(it == target_names.end() ? 0 : static_cast<std::size_t>(it - target_names.begin()));
  }
  Config key;
  key.values.resize(knob_names_.size());
  for (std::size_t c = 0; c < configs.size(); ++c) {
    double value = median_;
    if (matched) {
      for (std::size_t k = 0; k < position.size(); ++k) key.values[k] = configs[c].values.at(position[k]);
      if (const auto it = log_seconds_.find(key); it != log_seconds_.end()) value = it->second;
    }
    log_seconds[c] = static_cast<float>(value);
  }
}

}  // namespace perftune
