#include "surrogate/training/config_holdout.h"

#include <algorithm>

namespace perftune {

std::vector<std::size_t> draw_config_holdout(std::vector<std::size_t>& configs, double fraction,
                                             std::optional<std::size_t> kept, Rng& rng) {
  if (kept) std::erase(configs, *kept);
  std::vector<std::size_t> held;
  if (configs.size() >= kMinConfigsForHoldout && fraction > 0) {
    shuffle_in_place(configs, rng);
    const auto count = std::max<std::size_t>(1, static_cast<std::size_t>(fraction * configs.size()));
    held.assign(configs.end() - static_cast<std::ptrdiff_t>(count), configs.end());
    configs.resize(configs.size() - count);
  }
  if (kept) configs.push_back(*kept);
  return held;
}

}  // namespace perftune
