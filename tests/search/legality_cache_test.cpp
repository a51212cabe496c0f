#include "search/legality_cache.h"

#include <atomic>

#include <catch2/catch.hpp>
#include <tbb/parallel_for.h>

#include "search/random_streams.h"
#include "search/toy_cost_model.h"

namespace perftune {
namespace {

// A constraint that counts its calls (from any thread).
struct CountingConstraint {
  std::shared_ptr<std::atomic<std::size_t>> calls = std::make_shared<std::atomic<std::size_t>>(0);
  bool operator()(const Config& c) const {
    ++*calls;
    return c.values[0] * c.values[1] <= 64;
  }
};

TEST_CASE("a cached space answers like the space it wraps, checking each config's constraint once") {
  const std::size_t count = GENERATE(1000u, 4000u);  // checked from parallel chains
  CAPTURE(count);
  CountingConstraint constraint;
  const SearchSpace plain = testing::tile_space(6, constraint);  // 216 domain points
  const SearchSpace cached = with_legality_cache(plain);
  CHECK(cached.knob_names() == plain.knob_names());
  std::vector<Config> points;
  Rng rng = stream_rng({5});
  for (std::size_t i = 0; i < count; ++i) {
    Config config;
    for (const Knob& knob : plain.knobs()) config.values.push_back(knob.values[uniform_index(rng, knob.values.size())]);
    points.push_back(config);
  }
  std::vector<char> want(points.size()), got(points.size());
  for (std::size_t i = 0; i < points.size(); ++i) want[i] = plain.contains(points[i]);
  const std::size_t before = *constraint.calls;
  tbb::parallel_for(std::size_t{0}, points.size(), [&](std::size_t i) { got[i] = cached.contains(points[i]); });
  CHECK(got == want);
  const std::size_t checks = *constraint.calls - before;
  CHECK(checks >= 200);  // nearly every one of the 216 points is drawn...
  CHECK(checks <= 216 + 16);  // ...and checked once (two threads missing at once may both check it)
  // A copy shares the answers.
  const SearchSpace copy = cached;
  for (const Config& config : points) CHECK(copy.contains(config) == plain.contains(config));
}

TEST_CASE("a full legality cache starts over and stays correct") {
  CountingConstraint constraint;
  const SearchSpace plain = testing::tile_space(6, constraint);
  const SearchSpace cached = with_legality_cache(plain, 16);  // one entry per shard
  for (const Config& config : plain.enumerate()) CHECK(cached.contains(config));
  for (int pass = 0; pass < 2; ++pass)
    for (std::int64_t a : {1, 8, 32})
      for (std::int64_t b : {1, 4, 32}) {
        const Config config{{a, b, 1}};
        CAPTURE(a, b);
        CHECK(cached.contains(config) == (a * b <= 64));
      }
}

TEST_CASE("a recorded space keeps its own lookup") {
  const SearchSpace recorded = SearchSpace::recorded(std::vector<std::string>{"a", "b"}, {Config{{1, 2}}, Config{{3, 4}}});
  const SearchSpace cached = with_legality_cache(recorded);
  CHECK(cached.is_recorded());
  CHECK(cached.contains(Config{{1, 2}}));
  CHECK_FALSE(cached.contains(Config{{1, 4}}));
}

}  // namespace
}  // namespace perftune
