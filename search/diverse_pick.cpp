#include "search/diverse_pick.h"

#include <set>
#include <stdexcept>
#include <utility>

namespace perftune {

std::vector<Config> diverse_pick(std::span<const Config> ranked, std::size_t n) {
  const std::size_t knobs = ranked.empty() ? 0 : ranked.front().values.size();
  for (const Config& config : ranked)
    if (config.values.size() != knobs) throw std::invalid_argument("diverse_pick: configs of different lengths");
  std::set<std::pair<std::size_t, std::int64_t>> covered;  // (knob, value) already in the picks
  std::vector<bool> taken(ranked.size(), false);
  std::vector<Config> picks;
  while (picks.size() < n) {
    std::size_t best = ranked.size(), best_gain = 0;
    for (std::size_t i = 0; i < ranked.size(); ++i) {
      if (taken[i]) continue;
      std::size_t gain = 0;
      for (std::size_t knob = 0; knob < knobs; ++knob) gain += covered.count({knob, ranked[i].values[knob]}) ? 0 : 1;
      if (best == ranked.size() || gain > best_gain) best = i, best_gain = gain;
    }
    if (best == ranked.size()) break;
    taken[best] = true;
    for (std::size_t knob = 0; knob < knobs; ++knob) covered.emplace(knob, ranked[best].values[knob]);
    picks.push_back(ranked[best]);
  }
  return picks;
}

}  // namespace perftune
