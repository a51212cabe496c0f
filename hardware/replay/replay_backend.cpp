#include "hardware/replay/replay_backend.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <stdexcept>

namespace perftune {

std::vector<std::string> corpus_devices(const Corpus& corpus) {
  std::set<std::string> devices;
  for (const MeasuredKernel& kernel : corpus.kernels) devices.insert(kernel.device);
  return {devices.begin(), devices.end()};
}

ReplayBackend::ReplayBackend(const Corpus& corpus, const std::string& device, ReplayCost cost) : cost_(cost) {
  const auto devices = corpus_devices(corpus);
  std::string listed;
  for (const auto& d : devices) listed += (listed.empty() ? "" : ", ") + ("'" + d + "'");
  if (device.empty()) {
    if (devices.size() != 1)
      throw std::invalid_argument("replay: " + corpus.path + " has measurements from " + std::to_string(devices.size()) +
                                  " devices (" + listed + "); name one");
    device_ = devices.front();
  } else {
    if (!std::binary_search(devices.begin(), devices.end(), device))
      throw std::invalid_argument("replay: " + corpus.path + " has no measurements from device '" + device +
                                  "'; it has " + (listed.empty() ? "none" : listed));
    device_ = device;
  }
  for (const MeasuredKernel& measured : corpus.kernels) {
    if (measured.device != device_) continue;
    Recorded& recorded = kernels_[measured.kernel.key()];
    for (const Measurement& m : measured.measurements) recorded.results.emplace(m.config, m.result);
  }
}

std::vector<MeasureResult> ReplayBackend::measure(const Kernel& kernel, const SearchSpace& space,
                                                  std::span<const Config> configs) {
  std::vector<MeasureResult> results;
  results.reserve(configs.size());
  const auto found = kernels_.find(kernel.key());
  for (const Config& config : configs) {
    if (!space.contains(config)) {
      results.push_back(MeasureResult::failure(MeasureStatus::kInvalidConfig,
                                               "config " + config.to_string() + " is outside the kernel's space"));
      continue;
    }
    const MeasureResult* recorded = nullptr;
    if (found != kernels_.end()) {
      const auto it = found->second.results.find(config);
      if (it != found->second.results.end()) recorded = &it->second;
    }
    if (!recorded) {
      results.push_back(MeasureResult::failure(
          MeasureStatus::kNotRecorded, "config " + config.to_string() + " of kernel " + kernel.name() + " (" +
                                           kernel.key() + ") was never measured on " + device_));
      continue;
    }
    MeasureResult result = *recorded;
    if (!(result.cost_seconds > 0)) {
      const double runtime = result.ok() && std::isfinite(result.seconds) ? result.seconds : 0.0;
      result.cost_seconds = cost_.per_measurement_seconds + cost_.runtime_multiple * runtime;
    }
    results.push_back(std::move(result));
  }
  return results;
}

}  // namespace perftune
