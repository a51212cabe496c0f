#include "search/history.h"

#include <stdexcept>

#include <catch2/catch.hpp>

namespace perftune {
namespace {

MeasureResult ok(double seconds) { return MeasureResult::from_repeats({seconds}, 0.0); }

TEST_CASE("history keeps measurements in order and knows the fastest ok one") {
  History history;
  history.add(Config{{1}}, ok(3.0));
  history.add(Config{{2}}, MeasureResult::failure(MeasureStatus::kCompileError, "bad"));
  history.add(Config{{3}}, ok(1.0));
  history.add(Config{{4}}, ok(1.0));
  REQUIRE(history.size() == 4);
  CHECK(history.contains(Config{{2}}));
  CHECK_FALSE(history.contains(Config{{5}}));
  REQUIRE(history.best());
  CHECK(*history.best() == 2);  // the earliest of the tied fastest
  CHECK(history.find(Config{{2}})->status == MeasureStatus::kCompileError);
  CHECK(history.find(Config{{9}}) == nullptr);
  CHECK(history.ranked_ok() == std::vector<std::size_t>{2, 3, 0});
}

TEST_CASE("history refuses to record a config twice") {
  History history;
  history.add(Config{{1, 2}}, ok(1.0));
  CHECK_THROWS_AS(history.add(Config{{1, 2}}, ok(2.0)), std::logic_error);
}

TEST_CASE("history without an ok measurement has no best") {
  History history;
  history.add(Config{{1}}, MeasureResult::failure(MeasureStatus::kTimeout, "slow"));
  CHECK_FALSE(history.best());
  CHECK(history.ranked_ok().empty());
}

}  // namespace
}  // namespace perftune
