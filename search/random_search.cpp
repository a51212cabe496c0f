#include "search/random_search.h"

#include <unordered_set>

#include "search/random_streams.h"

namespace perftune {

namespace {
// Rejection tries per wanted config before falling back to enumeration: at 32, a space with at
// least a quarter of its configs left misses one with probability below 1e-4 (0.75^32).
constexpr std::size_t kTriesPerConfig = 32;
// Spaces up to this many configs may be enumerated to finish a sample (a few MB of configs).
constexpr std::uint64_t kEnumerateLimit = 1'000'000;
}  // namespace

std::vector<Config> sample_unmeasured(const SearchSpace& space, const History& history,
                                      const std::vector<Config>& exclude, std::size_t n, Rng& rng) {
  std::vector<Config> result;
  std::unordered_set<Config, ConfigHash> taken(exclude.begin(), exclude.end());
  for (std::size_t tries = 0; result.size() < n && tries < n * kTriesPerConfig; ++tries) {
    Config config = space.sample(rng);
    if (history.contains(config) || !taken.insert(config).second) continue;
    result.push_back(std::move(config));
  }
  if (result.size() >= n) return result;
  const auto size = space.size(kEnumerateLimit);
  if (!size || *size > kEnumerateLimit) return result;
  std::vector<Config> left;
  for (Config& config : space.enumerate(kEnumerateLimit))
    if (!history.contains(config) && !taken.count(config)) left.push_back(std::move(config));
  for (std::size_t i = 0; i < left.size() && result.size() < n; ++i) {
    std::swap(left[i], left[i + uniform_index(rng, left.size() - i)]);
    result.push_back(left[i]);
  }
  return result;
}

std::vector<Config> RandomSearch::propose(const SearchContext& context, std::size_t n) {
  Rng rng = stream_rng({context.seed, context.round, 0x72616e64 /* "rand" */});
  return sample_unmeasured(context.space, context.history, {}, n, rng);
}

}  // namespace perftune
