#pragma once
// A backend that replays recorded measurements (TPU tuning data, Kernel Tuner caches, perftune
// record logs: any Corpus) instead of running anything. It returns exactly what was recorded for
// (kernel key, config) and never guesses: a config outside the kernel's space is invalid_config,
// a valid one that was never measured is not_recorded.
#include <map>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "hardware/backend.h"
#include "ir/corpus.h"

namespace perftune {

// What a replayed measurement is charged when the source recorded no cost (cost_seconds == 0):
// a fixed price per measurement (compile, launch) plus a multiple of the runtime (repeats).
struct ReplayCost {
  double per_measurement_seconds = 0.0;
  double runtime_multiple = 0.0;
};

class ReplayBackend : public Backend {
 public:
  // Replays the kernels of `corpus` measured on `device` ("" picks the only device). Throws
  // std::invalid_argument naming the devices when `device` is absent or ambiguous.
  ReplayBackend(const Corpus& corpus, const std::string& device, ReplayCost cost = {});

  std::vector<MeasureResult> measure(const Kernel& kernel, const SearchSpace& space,
                                     std::span<const Config> configs) override;
  std::string fingerprint() const override { return "replay:" + device_; }
  const std::string& device() const { return device_; }

 private:
  struct Recorded {
    std::unordered_map<Config, MeasureResult, ConfigHash> results;  // the first recording of each config
  };
  std::string device_;
  ReplayCost cost_;
  std::map<std::string, Recorded> kernels_;  // by kernel key
};

// Devices that measured at least one kernel of the corpus, sorted.
std::vector<std::string> corpus_devices(const Corpus& corpus);

}  // namespace perftune
