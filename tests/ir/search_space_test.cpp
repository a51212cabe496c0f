#include <catch2/catch.hpp>

#include <map>
#include <set>

#include "ir/search_space.h"

using namespace perftune;

namespace {
SearchSpace product() { return SearchSpace({{"a", {1, 2, 4}}, {"b", {8, 16}}}); }
SearchSpace constrained() {
  return SearchSpace({{"a", {1, 2, 4}}, {"b", {8, 16}}}, [](const Config& c) { return c.values[0] * c.values[1] <= 32; });
}
SearchSpace recorded() {
  return SearchSpace::recorded(std::vector<std::string>{"x", "y"}, {Config{{1, 10}}, Config{{2, 10}}, Config{{2, 30}}, Config{{1, 10}}});
}
}  // namespace

TEST_CASE("size and enumeration of product, constrained and recorded spaces") {
  struct Row { const char* name; SearchSpace space; std::uint64_t size; };
  const auto row = GENERATE(Row{"product", product(), 6}, Row{"constrained", constrained(), 5}, Row{"recorded", recorded(), 3});
  CAPTURE(row.name);
  REQUIRE(row.space.size() == row.size);
  const auto all = row.space.enumerate();
  REQUIRE(all.size() == row.size);
  REQUIRE(std::is_sorted(all.begin(), all.end()));
  for (const Config& c : all) REQUIRE(row.space.contains(c));
  REQUIRE_THROWS_AS(row.space.enumerate(2), std::length_error);
}

TEST_CASE("contains rejects configs outside the domains, the constraint or the record") {
  REQUIRE_FALSE(product().contains(Config{{3, 8}}));
  REQUIRE_FALSE(product().contains(Config{{1}}));
  REQUIRE_FALSE(constrained().contains(Config{{4, 16}}));
  REQUIRE_FALSE(recorded().contains(Config{{1, 30}}));  // both values known, combination not recorded
}

TEST_CASE("sampling is roughly uniform over the valid configs (seeded)") {
  struct Row { const char* name; SearchSpace space; };
  const auto row = GENERATE(Row{"product", product()}, Row{"constrained", constrained()}, Row{"recorded", recorded()});
  CAPTURE(row.name);
  Rng rng(12345);
  std::map<Config, int> counts;
  const int draws = 6000;
  for (int i = 0; i < draws; ++i) ++counts[row.space.sample(rng)];
  const auto size = static_cast<int>(*row.space.size());
  REQUIRE(static_cast<int>(counts.size()) == size);
  for (const auto& [config, count] : counts) {
    CAPTURE(config.to_string(), count);
    REQUIRE(row.space.contains(config));
    // Binomial standard deviation is below 35 here; 20% of the mean is more than 5 of them.
    REQUIRE(std::abs(count - draws / size) < draws / size / 5);
  }
}

TEST_CASE("neighbours differ in one knob by one step and stay valid") {
  std::set<Config> n;
  for (const Config& c : product().neighbours(Config{{2, 16}})) n.insert(c);
  REQUIRE(n == std::set<Config>{Config{{1, 16}}, Config{{4, 16}}, Config{{2, 8}}});
  const auto limited = constrained().neighbours(Config{{2, 16}});
  REQUIRE(limited.size() == 2);  // {4,16} violates the constraint
  const auto listed = recorded().neighbours(Config{{2, 10}});
  REQUIRE(std::set<Config>(listed.begin(), listed.end()) == std::set<Config>{Config{{1, 10}}, Config{{2, 30}}});
}

TEST_CASE("one-knob changes reach every other value of one knob and stay valid") {
  const SearchSpace wide({{"a", {1, 2, 4, 8}}, {"b", {8, 16}}}, [](const Config& c) { return c.values[0] * c.values[1] <= 64; });
  const auto changes = wide.one_knob_changes(Config{{1, 16}});
  // a: 2, 4 (8 * 16 > 64); b: 8. A step-neighbour search would not reach {4, 16} in one move.
  REQUIRE(std::set<Config>(changes.begin(), changes.end()) == std::set<Config>{Config{{2, 16}}, Config{{4, 16}}, Config{{1, 8}}});
  const auto listed = recorded().one_knob_changes(Config{{1, 10}});
  REQUIRE(std::set<Config>(listed.begin(), listed.end()) == std::set<Config>{Config{{2, 10}}});
}

TEST_CASE("configs round-trip through JSON and bad JSON names the knob") {
  const SearchSpace space = product();
  const Config c{{4, 8}};
  REQUIRE(space.from_json(nlohmann::json::parse(space.to_json(c).dump())) == c);
  REQUIRE_THROWS_WITH(space.from_json(nlohmann::json{{"a", 4}}), Catch::Contains("b"));
  REQUIRE_THROWS_WITH(space.from_json(nlohmann::json{{"a", 4}, {"b", 8}, {"zzz", 1}}), Catch::Contains("zzz"));
}

TEST_CASE("an empty space is rejected") {
  REQUIRE_THROWS_AS(SearchSpace(std::vector<Knob>{}), std::invalid_argument);
  REQUIRE_THROWS_AS(SearchSpace(std::vector<Knob>{Knob{"a", {}}}), std::invalid_argument);
  REQUIRE_THROWS_AS(SearchSpace(std::vector<Knob>{Knob{"a", {1}}, Knob{"a", {2}}}), std::invalid_argument);
  REQUIRE_THROWS_AS(SearchSpace::recorded(std::vector<std::string>{"x"}, {}), std::invalid_argument);
  REQUIRE_THROWS_AS(SearchSpace::recorded(std::vector<Knob>{{"x", {1, 2}}}, {Config{{3}}}), std::invalid_argument);
}
