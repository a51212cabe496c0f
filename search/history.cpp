#include "search/history.h"

#include <algorithm>
#include <stdexcept>

namespace perftune {

void History::add(Config config, MeasureResult result) {
  if (contains(config)) throw std::logic_error("config " + config.to_string() + " was measured twice");
  const std::size_t index = entries_.size();
  index_.emplace(config, index);
  const bool faster = result.ok() && (!best_ || result.seconds < entries_[*best_].result.seconds);
  entries_.push_back(Measurement{std::move(config), std::move(result)});
  if (faster) best_ = index;
}

const MeasureResult* History::find(const Config& config) const {
  const auto it = index_.find(config);
  return it == index_.end() ? nullptr : &entries_[it->second].result;
}

std::vector<std::size_t> History::ranked_ok() const {
  std::vector<std::size_t> ok;
  for (std::size_t i = 0; i < entries_.size(); ++i)
    if (entries_[i].result.ok()) ok.push_back(i);
  std::stable_sort(ok.begin(), ok.end(),
                   [&](std::size_t a, std::size_t b) { return entries_[a].result.seconds < entries_[b].result.seconds; });
  return ok;
}

}  // namespace perftune
