#include "search/cached_cost_model.h"

#include <algorithm>
#include <cstring>
#include <numeric>

#include <catch2/catch.hpp>

#include "search/random_streams.h"
#include "search/toy_cost_model.h"

namespace perftune {
namespace {

// Random batches of a small space, so batches repeat configs within and across calls.
std::vector<Config> random_batch(const SearchSpace& space, std::size_t n, std::uint64_t seed) {
  Rng rng = stream_rng({seed});
  std::vector<Config> batch;
  for (std::size_t i = 0; i < n; ++i) batch.push_back(space.sample(rng));
  return batch;
}

std::size_t scored(const testing::ToyCostModel& model) {
  return std::accumulate(model.batch_sizes.begin(), model.batch_sizes.end(), std::size_t{0});
}

// An inner model with a posterior of its own (whose measured list names it).
class BelievingModel : public testing::ToyCostModel {
 public:
  using ToyCostModel::ToyCostModel;
  struct Belief : PredictiveBelief {
    bool fitted() const override { return true; }
    std::vector<Measured> measured() const override { return {Measured{Config{{1, 1, 1}}, 0.5}}; }
    std::unique_ptr<CandidateScores> at(std::span<const Config>) override { return nullptr; }
  };
  std::unique_ptr<PredictiveBelief> belief(const Kernel&, const SearchSpace&) override { return std::make_unique<Belief>(); }
};

TEST_CASE("the belief is the inner model's") {
  const SearchSpace space = testing::tile_space(4);
  const Kernel kernel = testing::toy_kernel();
  BelievingModel believing(Config{{2, 4, 8}});
  CachedCostModel cached(believing);
  const std::unique_ptr<PredictiveBelief> belief = cached.belief(kernel, space);
  REQUIRE(belief);
  CHECK(belief->measured().front().config == Config{{1, 1, 1}});
  testing::ToyCostModel plain(Config{{2, 4, 8}});
  CachedCostModel without(plain);
  CHECK_FALSE(without.belief(kernel, space));
}

TEST_CASE("cached scores equal the inner model's bit for bit, and the inner model sees each config once") {
  const std::size_t batch_size = GENERATE(1u, 7u, 300u);
  CAPTURE(batch_size);
  const SearchSpace space = testing::tile_space(4);  // 64 configs
  const Kernel kernel = testing::toy_kernel();
  testing::ToyCostModel inner(Config{{2, 4, 8}}), reference(Config{{2, 4, 8}});
  CachedCostModel cached(inner, CachedCostModelOptions{.inner_learns = false});
  for (std::uint64_t call = 0; call < 6; ++call) {
    CAPTURE(call);
    const auto batch = random_batch(space, batch_size, call);
    std::vector<float> got(batch.size()), want(batch.size());
    cached.predict(kernel, space, batch, got);
    reference.predict(kernel, space, batch, want);
    CHECK(std::memcmp(got.data(), want.data(), got.size() * sizeof(float)) == 0);
  }
  CHECK(scored(inner) == cached.misses());
  CHECK(cached.misses() <= 64);  // never more than the space holds
  CHECK(cached.hits() + cached.misses() <= 6 * batch_size);
  if (batch_size == 300) CHECK(cached.hits() > 0);
}

// A cached toy model that has scored one batch of `size` configs.
struct Scored {
  Scored(bool learns, std::size_t size) : cached(inner, CachedCostModelOptions{.inner_learns = learns}) {
    cached.predict(kernel, space, batch = random_batch(space, size, 1), scores = std::vector<float>(size));
    first = scored(inner);
  }
  SearchSpace space = testing::tile_space(4);
  Kernel kernel = testing::toy_kernel();
  testing::ToyCostModel inner{Config{{2, 4, 8}}};
  CachedCostModel cached;
  std::vector<Config> batch;
  std::vector<float> scores;
  std::size_t first = 0;  // configs the inner model scored for the first batch
};

TEST_CASE("an update drops the cached scores of a learning model and keeps those of a fixed one") {
  const bool learns = GENERATE(true, false);
  CAPTURE(learns);
  Scored s(learns, 20);
  auto& [space, kernel, inner, cached, batch, scores, first] = s;
  const Measurement measured{batch.front(), MeasureResult::from_repeats({1e-3}, 0.0)};
  cached.update(kernel, space, std::span<const Measurement>(&measured, 1));
  CHECK(inner.updates == std::vector<std::size_t>{1});  // the inner model still learns
  cached.predict(kernel, space, batch, scores);
  CHECK(scored(inner) == (learns ? 2 * first : first));
}

TEST_CASE("scores of another kernel or space are never served from the cache") {
  Scored s(false, 10);
  auto& [space, kernel, inner, cached, batch, scores, first] = s;
  const SearchSpace other_space = testing::tile_space(4);
  const Kernel other_kernel = Kernel::opaque("other", "00000000000000cc");
  cached.predict(other_kernel, space, batch, scores);
  CHECK(scored(inner) == 2 * first);
  cached.predict(other_kernel, other_space, batch, scores);
  CHECK(scored(inner) == 3 * first);
}

}  // namespace
}  // namespace perftune
