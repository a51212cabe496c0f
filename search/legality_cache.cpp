#include "search/legality_cache.h"

#include <algorithm>
#include <array>
#include <memory>
#include <mutex>
#include <unordered_map>

namespace perftune {

namespace {

// Parallel chains (TBB, as many as cores) check validity at once: a lock per shard keeps them
// from queueing on one mutex. 16 shards is ample for the 2-16 threads this runs on.
constexpr std::size_t kShards = 16;

class Answers {
 public:
  explicit Answers(std::size_t capacity) : per_shard_(std::max<std::size_t>(1, capacity / kShards)) {}

  bool contains(const SearchSpace& inner, const Config& config) {
    const std::size_t hash = ConfigHash{}(config);
    Shard& shard = shards_[hash % kShards];
    {
      std::lock_guard lock(shard.mutex);
      if (const auto it = shard.answers.find(config); it != shard.answers.end()) return it->second;
    }
    const bool valid = inner.contains(config);  // outside the lock: this is the expensive part
    std::lock_guard lock(shard.mutex);
    if (shard.answers.size() >= per_shard_) shard.answers.clear();
    shard.answers.emplace(config, valid);
    return valid;
  }

 private:
  struct Shard {
    std::mutex mutex;
    std::unordered_map<Config, bool, ConfigHash> answers;
  };
  std::size_t per_shard_;
  std::array<Shard, kShards> shards_;
};

}  // namespace

SearchSpace with_legality_cache(const SearchSpace& space, std::size_t capacity) {
  if (space.is_recorded()) return space;
  auto inner = std::make_shared<const SearchSpace>(space);
  auto answers = std::make_shared<Answers>(capacity);
  return SearchSpace(space.knobs(), [inner, answers](const Config& config) { return answers->contains(*inner, config); });
}

}  // namespace perftune
