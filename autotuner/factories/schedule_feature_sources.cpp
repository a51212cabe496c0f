#include "autotuner/factories/schedule_feature_sources.h"

#include <algorithm>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "hardware/halide/halide_schedule.h"
#include "hardware/halide/loop_nest_features.h"
#include "surrogate/trees/schedule_features.h"

namespace perftune {

namespace {

class HalideLoopNestSource : public ScheduleFeatureSource {
 public:
  std::size_t width() const override { return kLoopNestFeatureCount; }

  void rows(const Kernel& kernel, const SearchSpace& space, std::span<const Config> configs, std::span<float> out) override {
    std::lock_guard lock(mutex_);
    std::map<Config, std::vector<float>>& known = lowered_[kernel.key()];
    std::vector<Config> missing;
    std::set<Config> queued;
    std::vector<std::map<std::string, std::int64_t>> schedules;
    for (const Config& config : configs)
      if (!known.count(config) && queued.insert(config).second) {
        missing.push_back(config);
        schedules.push_back(named_knobs(space, config));
      }
    if (!missing.empty()) {
      const std::vector<float> lowered = featurizer_.rows(kernel.body(), schedules);
      for (std::size_t i = 0; i < missing.size(); ++i)
        known[missing[i]].assign(lowered.begin() + i * kLoopNestFeatureCount, lowered.begin() + (i + 1) * kLoopNestFeatureCount);
    }
    for (std::size_t i = 0; i < configs.size(); ++i) std::copy_n(known.at(configs[i]).begin(), kLoopNestFeatureCount, out.begin() + i * kLoopNestFeatureCount);
  }

 private:
  std::mutex mutex_;
  LoopNestFeaturizer featurizer_;
  std::map<std::string, std::map<Config, std::vector<float>>> lowered_;  // by Kernel::key()
};

}  // namespace

void provide_schedule_feature_sources() {
  provide_schedule_features("halide_loop_nest", [] { return std::make_shared<HalideLoopNestSource>(); });
}

}  // namespace perftune
