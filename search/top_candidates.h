#pragma once
// The best-scored distinct configs seen during a search (lower score is better), bounded in size.
// Ties are broken by the config's value so the result never depends on arrival order or threads.
#include <cstddef>
#include <set>
#include <unordered_set>
#include <utility>
#include <vector>

#include "ir/config.h"

namespace perftune {

class TopCandidates {
 public:
  explicit TopCandidates(std::size_t capacity) : capacity_(capacity) {}

  // Keeps `config` if it is new and among the best `capacity` so far. Returns true if the kept
  // set changed (search uses that to stop early).
  bool offer(float score, const Config& config);
  std::size_t size() const { return ranked_.size(); }
  // Best first.
  std::vector<Config> best_first() const;

 private:
  std::size_t capacity_;
  std::set<std::pair<float, Config>> ranked_;
  std::unordered_set<Config, ConfigHash> kept_;
};

}  // namespace perftune
