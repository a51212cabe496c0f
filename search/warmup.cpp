#include "search/warmup.h"

#include "search/random_search.h"
#include "search/random_streams.h"

namespace perftune {

namespace {
constexpr std::uint64_t kWarmupStream = 0x7761726d;  // "warm": apart from the strategies' other streams
}  // namespace

std::optional<std::vector<Config>> warmup_proposals(const SearchContext& context, std::size_t n, std::size_t warmup) {
  if (context.history.size() >= warmup) return std::nullopt;
  Rng rng = stream_rng({context.seed, context.round, kWarmupStream});
  return sample_unmeasured(context.space, context.history, {}, n, rng);
}

}  // namespace perftune
