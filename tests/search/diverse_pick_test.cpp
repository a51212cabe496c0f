// The diverse pick: the model's best first, then whichever config of the pool adds the most knob
// values the batch lacks, the better-ranked on ties.
#include "search/diverse_pick.h"

#include <stdexcept>

#include <catch2/catch.hpp>

namespace perftune {
namespace {

TEST_CASE("a diverse pick starts at the best-ranked config and then covers new knob values") {
  // Ranked best first: two variants of one belief (vector 32), then other ideas.
  const std::vector<Config> ranked{Config{{32, 8, 1}}, Config{{32, 8, 2}}, Config{{32, 4, 1}}, Config{{16, 2, 2}},
                                   Config{{8, 1, 4}}};
  const auto two = diverse_pick(ranked, 2);
  REQUIRE(two.size() == 2);
  CHECK(two[0] == ranked[0]);
  CHECK(two[1] == ranked[3]);  // three new values; the next-ranked variants add one each
  const auto all = diverse_pick(ranked, 10);
  CHECK(all.size() == ranked.size());
  CHECK(all[2] == ranked[4]);  // {8, 1, 4}: three new values again
  CHECK(all[3] == ranked[2]);  // 4 in the second knob
  CHECK(all[4] == ranked[1]);  // nothing new
}

TEST_CASE("a diverse pick of nothing or of none is empty") {
  const std::vector<Config> ranked{Config{{32, 8}}, Config{{16, 8}}};
  CHECK(diverse_pick({}, 3).empty());
  CHECK(diverse_pick(ranked, 0).empty());
  CHECK(diverse_pick(ranked, 1) == std::vector<Config>{ranked.front()});
}

TEST_CASE("a diverse pick rejects configs of different lengths") {
  const std::vector<Config> ranked{Config{{32, 8}}, Config{{16}}};
  CHECK_THROWS_AS(diverse_pick(ranked, 2), std::invalid_argument);
}

}  // namespace
}  // namespace perftune
