#include <catch2/catch.hpp>

#include <cmath>

#include "experiments/live/scheduler_comparison.h"

using namespace perftune;
using json = nlohmann::ordered_json;

namespace {

json peer(const char* kind, json seconds) { return {{"kind", kind}, {"status", seconds.is_null() ? "timeout" : "ok"}, {"seconds", seconds}}; }

}  // namespace

TEST_CASE("scheduler comparison: each strategy against the fastest scheduler that ran, libraries left out") {
  json spaces = json::array();
  // Space a: Adams2019 2.0 is the fastest scheduler; the library's 1.0 is not a scheduler; Li2018 failed.
  spaces.push_back({{"name", "a"},
                    {"peers", {{"Mullapudi2016", peer("scheduler", 4.0)}, {"Adams2019", peer("scheduler", 2.0)},
                               {"Li2018", peer("scheduler", nullptr)}, {"OpenBLAS", peer("library", 1.0)}}},
                    {"strategies", {{"evolution", {{"best_mean", {8.0, 4.0, 1.0}}}}, {"random", {{"best_mean", {8.0, 8.0, 2.1}}}}}}});
  // Space b: only Mullapudi2016 (1.0); evolution's curve stops at 2 measurements and keeps its last best.
  spaces.push_back({{"name", "b"},
                    {"peers", {{"Mullapudi2016", peer("scheduler", 1.0)}}},
                    {"strategies", {{"evolution", {{"best_mean", {2.0, 0.5}}}}, {"random", {{"best_mean", {2.0, 2.0, 2.0}}}}}}});
  // Space c: no scheduler ran: not compared.
  spaces.push_back({{"name", "c"},
                    {"peers", {{"OpenBLAS", peer("library", 1.0)}}},
                    {"strategies", {{"evolution", {{"best_mean", {1.0, 1.0, 1.0}}}}, {"random", {{"best_mean", {9.0, 9.0, 9.0}}}}}}});
  json strategies = {{"evolution", json::object()}, {"random", json::object()}};
  add_scheduler_comparison(spaces, strategies, {1, 3});

  REQUIRE(spaces[0]["fastest_scheduler"]["name"] == "Adams2019");
  REQUIRE(spaces[0]["strategies"]["evolution"]["vs_fastest_scheduler"]["3"].get<double>() == Approx(2.0));
  REQUIRE(spaces[1]["strategies"]["evolution"]["vs_fastest_scheduler"]["3"].get<double>() == Approx(2.0));  // 1.0 / 0.5
  REQUIRE_FALSE(spaces[2].contains("fastest_scheduler"));
  REQUIRE_FALSE(spaces[2]["strategies"]["evolution"].contains("vs_fastest_scheduler"));

  const json& evolution = strategies["evolution"]["vs_fastest_scheduler"];
  REQUIRE(evolution["1"]["geomean"].get<double>() == Approx(std::sqrt(0.25 * 0.5)));  // 2/8 and 1/2
  REQUIRE(evolution["3"]["geomean"].get<double>() == Approx(2.0));
  REQUIRE(evolution["3"]["spaces"] == 2);
  REQUIRE(evolution["3"]["spaces_keeping_up"] == 2);
  const json& random = strategies["random"]["vs_fastest_scheduler"]["3"];
  REQUIRE(random["min"].get<double>() == Approx(0.5));  // b: 1.0 / 2.0
  REQUIRE(random["min_space"] == "b");
  REQUIRE(random["spaces_keeping_up"] == 1);  // a: 2.0 / 2.1 = 0.952, within 5%
}

TEST_CASE("scheduler comparison on re-measured picks and peers reads and writes the re-measured block only") {
  json spaces = json::array();
  // The runs' figures say evolution is 4x faster than Adams2019; re-measured side by side, 1.25x.
  spaces.push_back({{"name", "a"},
                    {"peers", {{"Adams2019", peer("scheduler", 4.0)}}},
                    {"strategies", {{"evolution", {{"best_mean", {1.0, 1.0}}}}}},
                    {"remeasured",
                     {{"peers", {{"Adams2019", peer("scheduler", 2.5)}, {"OpenBLAS", peer("library", 1.0)}}},
                      {"strategies", {{"evolution", {{"pick_seconds_at", {{"2", 2.0}}}}}, {"sampling", {{"pick_seconds_at", {{"2", nullptr}}}}}}}}}});
  // Not re-measured: left out.
  spaces.push_back({{"name", "b"},
                    {"peers", {{"Adams2019", peer("scheduler", 1.0)}}},
                    {"strategies", {{"evolution", {{"best_mean", {1.0, 1.0}}}}}}});
  json strategies = {{"evolution", json::object()}, {"sampling", json::object()}};
  add_scheduler_comparison(spaces, strategies, {2}, ComparisonBasis::kRemeasured);

  REQUIRE(spaces[0]["remeasured"]["fastest_scheduler"]["seconds"].get<double>() == Approx(2.5));
  REQUIRE(spaces[0]["remeasured"]["strategies"]["evolution"]["vs_fastest_scheduler"]["2"].get<double>() == Approx(1.25));
  REQUIRE_FALSE(spaces[0].contains("fastest_scheduler"));  // the runs' basis is untouched
  const json& evolution = strategies["evolution"]["vs_fastest_scheduler_remeasured"]["2"];
  REQUIRE(evolution["geomean"].get<double>() == Approx(1.25));
  REQUIRE(evolution["spaces"] == 1);
  REQUIRE_FALSE(strategies["evolution"].contains("vs_fastest_scheduler"));
  REQUIRE_FALSE(strategies["sampling"].contains("vs_fastest_scheduler_remeasured"));  // no measured picks
}
