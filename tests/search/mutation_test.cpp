#include "search/mutation.h"

#include <catch2/catch.hpp>

#include "search/toy_cost_model.h"

namespace perftune {
namespace {

TEST_CASE("every mutation rule yields a valid, different config") {
  // Constraint: the two output tiles multiply to at most 4096 (a register/shared-memory bound).
  const SearchSpace space = testing::tile_space(10, [](const Config& c) { return c.values[0] * c.values[1] <= 4096; });
  const auto [random_value, neighbour_step, several_knobs] = GENERATE(table<double, double, double>(
      {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}, {0.5, 0.3, 0.2}}));
  const MutationWeights weights{random_value, neighbour_step, several_knobs};
  const std::uint64_t seed = GENERATE(1u, 2u, 3u);
  CAPTURE(random_value, neighbour_step, several_knobs, seed);
  Rng rng(seed);
  Config parent{{64, 64, 8}};
  for (int i = 0; i < 500; ++i) {
    const auto child = mutate(space, parent, weights, rng);
    REQUIRE(child);
    CHECK(*child != parent);
    CHECK(space.contains(*child));
    if (neighbour_step == 1) {  // exactly one knob moved by one step along its domain
      int moved = 0;
      for (std::size_t k = 0; k < 3; ++k)
        if (child->values[k] != parent.values[k]) {
          ++moved;
          CHECK(std::abs(space.index_of(k, child->values[k]) - space.index_of(k, parent.values[k])) == 1);
        }
      CHECK(moved == 1);
    }
    parent = *child;
  }
}

TEST_CASE("mutation of binary fusion knobs flips and keeps only legal partitions") {
  // Three fuse.<e> flags where fusing edge 2 requires edge 1 fused (a stand-in legality rule).
  const SearchSpace space({{"fuse.0", {0, 1}}, {"fuse.1", {0, 1}}, {"fuse.2", {0, 1}}},
                          [](const Config& c) { return c.values[2] == 0 || c.values[1] == 1; });
  Rng rng(7);
  for (int i = 0; i < 200; ++i) {
    const Config parent = space.sample(rng);
    const auto child = mutate(space, parent, MutationWeights{}, rng);
    REQUIRE(child);
    CHECK(space.contains(*child));
  }
}

TEST_CASE("a space with one config cannot be mutated") {
  const SearchSpace space({{"a", {4}}, {"b", {8}}});
  Rng rng(1);
  CHECK_FALSE(mutate(space, Config{{4, 8}}, MutationWeights{}, rng));
}

TEST_CASE("a space with one movable knob mutates under every rule") {
  // A program with one fusible edge: "several knobs" has only the one to change.
  const SearchSpace space({{"fuse.0", {0, 1}}, {"fixed", {4}}});
  const auto [random_value, neighbour_step, several_knobs] = GENERATE(table<double, double, double>({{0, 0, 1}, {1, 1, 1}}));
  Rng rng(2);
  for (int i = 0; i < 50; ++i) {
    const auto child = mutate(space, Config{{0, 4}}, MutationWeights{random_value, neighbour_step, several_knobs}, rng);
    REQUIRE(child);
    CHECK(*child == Config{{1, 4}});
  }
}

TEST_CASE("crossover mixes the parents' knobs into a valid new config") {
  const SearchSpace space = testing::tile_space(10);
  Rng rng(3);
  const Config a{{1, 2, 4}}, b{{512, 256, 128}};
  for (int i = 0; i < 100; ++i) {
    const auto child = crossover(space, a, b, rng);
    REQUIRE(child);
    CHECK(*child != a);
    CHECK(*child != b);
    for (std::size_t k = 0; k < 3; ++k) CHECK((child->values[k] == a.values[k] || child->values[k] == b.values[k]));
  }
}

}  // namespace
}  // namespace perftune
