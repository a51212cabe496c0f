#include "search/cached_cost_model.h"

#include <stdexcept>
#include <vector>

namespace perftune {

namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

void CachedCostModel::predict(const Kernel& kernel, const SearchSpace& space, std::span<const Config> configs,
                              std::span<float> log_seconds) {
  if (log_seconds.size() != configs.size())
    throw std::invalid_argument("CachedCostModel::predict: " + std::to_string(configs.size()) + " configs but " +
                                std::to_string(log_seconds.size()) + " outputs");
  if (space_ != &space || kernel_key_ != kernel.key()) {
    scores_.clear();
    space_ = &space;
    kernel_key_ = kernel.key();
  }
  // Misses, each config once even if the batch repeats it.
  std::vector<Config> missing;
  std::vector<std::size_t> missing_at;  // batch position of each config left to fill
  std::unordered_map<Config, std::size_t, ConfigHash> missing_index;
  for (std::size_t i = 0; i < configs.size(); ++i) {
    if (const auto it = scores_.find(configs[i]); it != scores_.end()) {
      log_seconds[i] = it->second;
      ++hits_;
      continue;
    }
    missing_at.push_back(i);
    if (missing_index.emplace(configs[i], missing.size()).second) missing.push_back(configs[i]);
  }
  if (missing.empty()) return;
  misses_ += missing.size();
  std::vector<float> fresh(missing.size());
  const auto start = std::chrono::steady_clock::now();
  inner_.predict(kernel, space, missing, fresh);
  inner_predict_seconds_ += seconds_since(start);
  for (std::size_t i : missing_at) log_seconds[i] = fresh[missing_index.at(configs[i])];
  if (scores_.size() + missing.size() > options_.capacity) scores_.clear();
  for (std::size_t m = 0; m < missing.size(); ++m) scores_.emplace(std::move(missing[m]), fresh[m]);
}

void CachedCostModel::update(const Kernel& kernel, const SearchSpace& space, std::span<const Measurement> measurements) {
  const auto start = std::chrono::steady_clock::now();
  inner_.update(kernel, space, measurements);
  inner_update_seconds_ += seconds_since(start);
  if (options_.inner_learns) scores_.clear();
}

}  // namespace perftune
