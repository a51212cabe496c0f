#include "search/top_candidates.h"

#include <algorithm>

#include <catch2/catch.hpp>

namespace perftune {
namespace {

TEST_CASE("top candidates keep the best distinct configs, best first") {
  TopCandidates top(3);
  CHECK(top.offer(5.0f, Config{{5}}));
  CHECK(top.offer(1.0f, Config{{1}}));
  CHECK_FALSE(top.offer(1.0f, Config{{1}}));  // duplicate
  CHECK(top.offer(3.0f, Config{{3}}));
  CHECK(top.offer(2.0f, Config{{2}}));        // evicts 5
  CHECK_FALSE(top.offer(9.0f, Config{{9}}));  // worse than all kept
  CHECK(top.best_first() == std::vector<Config>{Config{{1}}, Config{{2}}, Config{{3}}});
  CHECK(top.offer(4.0f, Config{{5}}) == false);
}

TEST_CASE("top candidates do not depend on the order of arrival") {
  std::vector<std::pair<float, Config>> offers;
  for (int i = 0; i < 50; ++i) offers.push_back({static_cast<float>(i % 7), Config{{i}}});
  TopCandidates forward(10), backward(10);
  for (const auto& [s, c] : offers) forward.offer(s, c);
  std::reverse(offers.begin(), offers.end());
  for (const auto& [s, c] : offers) backward.offer(s, c);
  CHECK(forward.best_first() == backward.best_first());
}

}  // namespace
}  // namespace perftune
