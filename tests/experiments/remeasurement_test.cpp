// A live space re-measured: each run's pick at each budget is found by its value, the candidates
// are those picks and the fastest configs, rounds are logged and resumed with nothing measured
// twice, and the scores value every pick at its re-measured runtime against a re-measured optimum.
#include "experiments/live/remeasurement.h"

#include <filesystem>

#include "ir/json_view.h"
#include "ir/record_log.h"
#include "ir/program_json.h"
#include "test_support.h"

namespace perftune {
namespace {

Config at(std::int64_t a) { return Config{{a, 1}}; }

MeasureResult ok(double seconds) { return MeasureResult::from_repeats({seconds}, 0.1); }

const Kernel& add_kernel() {
  static const nlohmann::json program = parse_json_text(R"({"name": "add", "ops": [
    {"name": "a", "opcode": "parameter", "shape": [8], "parameter_number": 0},
    {"name": "y", "opcode": "add", "operands": ["a", "a"], "shape": [8]}]})", "test program");
  static const Kernel kernel("add", program_from_json(JsonView(program, "test program")));
  return kernel;
}

TEST_CASE("a run's pick after each budget is the config whose measurement its curve holds") {
  const std::vector<std::pair<Config, MeasureResult>> records = {
      {at(0), ok(5.0)}, {at(1), ok(3.0)}, {at(2), MeasureResult::failure(MeasureStatus::kCompileError, "no")}, {at(3), ok(4.0)}, {at(4), ok(1.0)}};
  const LiveRun run = live_run(2, false, records, {5.0, 3.0, 3.0, 3.0, 1.0}, {2, 4, 10});
  REQUIRE(run.strategy == 2);
  REQUIRE(run.measured.size() == 4);
  REQUIRE(run.best_at.size() == 3);
  REQUIRE(*run.best_at[0] == at(1));
  REQUIRE(*run.best_at[1] == at(1));
  REQUIRE(*run.best_at[2] == at(4));  // past the run's end: its last best
  // A confirmation's median (2.9) replaced config 1's first figure (3.0) in the curve: still config 1.
  REQUIRE(*live_run(0, false, records, {5.0, 3.0, 3.0, 2.9}, {4}).best_at[0] == at(1));
  const LiveRun none = live_run(0, true, {{at(2), MeasureResult::failure(MeasureStatus::kTimeout, "hung")}}, {std::nullopt}, {1});
  REQUIRE_FALSE(none.best_at[0].has_value());
}

TEST_CASE("the configs re-measured are every run's picks and the fastest configs, each once") {
  LiveRun first{0, true, {at(3), at(1)}, {{at(3), 4.0}, {at(1), 2.0}, {at(7), 0.5}}};
  LiveRun second{1, false, {at(1), std::nullopt}, {{at(1), 2.1}, {at(8), 0.6}, {at(9), 0.9}}};
  const std::vector<Config> two = remeasure_candidates({first, second}, 2);
  REQUIRE(two == std::vector<Config>{at(3), at(1), at(7), at(8)});
  const std::vector<Config> all = remeasure_candidates({first, second}, 10);
  REQUIRE(all.size() == 5);  // 3, 1, then 7, 8, 9 by time (1 and 3 already there)
  REQUIRE(all[4] == at(9));
}

TEST_CASE("a reference experiment's runs on a space are read as one run without picks") {
  const std::string reference = scratch_dir("remeasure_reference");
  const std::vector<std::string> knobs = {"a", "b"};
  const auto write = [&](const std::string& run, const std::vector<std::pair<Config, MeasureResult>>& records, const std::string& key) {
    RecordLog log(reference + "/runs/mm/program/" + run + "/records.jsonl");
    for (const auto& [config, result] : records) log.append(Record{"cpu:test", key, "add", knobs, config, result, 0.0});
  };
  write("random/seed_1", {{at(1), ok(2.0)}, {at(3), MeasureResult::failure(MeasureStatus::kCompileError, "no")}}, add_kernel().key());
  write("evolution/seed_1", {{at(2), ok(1.0)}, {at(4), ok(0.5)}}, add_kernel().key());
  write("evolution/seed_1", {{at(5), ok(0.1)}}, "another kernel");
  write("evolution/seed_2.stale-1", {{at(9), ok(0.1)}}, add_kernel().key());  // set aside: not read
  const LiveRun run = reference_run(reference, "mm/program", add_kernel().key(), knobs);
  REQUIRE(run.best_at.empty());
  REQUIRE(run.measured.size() == 3);
  REQUIRE(remeasure_candidates({run}, 2) == std::vector<Config>{at(4), at(2)});
  REQUIRE(reference_run(reference, "conv/program", add_kernel().key(), knobs).measured.empty());
}

TEST_CASE("re-measured scores value each run's pick at its fresh runtime, against the fastest re-measured config") {
  // The random run measured config 7 once at 0.5, its luckiest draw; re-measured it runs at 1.0,
  // slower than config 1 (measured 0.95, re-measured 0.9) that strategy 1 picked.
  // After 3 measurements random search holds config 1 too: at the optimum, nothing to standardize.
  const LiveRun random{0, true, {at(3), at(7), at(1)}, {{at(3), 2.0}, {at(7), 0.5}, {at(1), 0.92}}};
  const LiveRun tuned{1, false, {at(1), at(1), at(1)}, {{at(1), 0.95}}};
  const LiveRun empty{2, false, {std::nullopt, std::nullopt, std::nullopt}, {}};
  const std::vector<Config> configs = {at(3), at(7), at(1)};
  const std::vector<std::vector<MeasureResult>> rounds = {
      {ok(2.02), ok(2.0), ok(1.98)}, {ok(1.01), ok(1.0), ok(0.99)}, {ok(0.9), ok(0.9), ok(0.9)}};
  std::vector<std::optional<double>> values;
  for (const auto& r : rounds) values.push_back(remeasured_seconds(r));
  const auto scores = remeasured_scores({random, tuned, empty}, configs, values, rounds, {"random", "tuned", "none yet"}, {1, 2, 3});
  REQUIRE(scores["configs"] == 3);
  REQUIRE(scores["repeats"] == 3);
  REQUIRE(scores["optimum_seconds"].get<double>() == 0.9);
  REQUIRE(scores["measured_optimum_seconds"].get<double>() == 0.5);
  REQUIRE(scores["measured_optimum_remeasured_seconds"].get<double>() == 1.0);
  REQUIRE(scores["round_spread"].get<double>() == Approx(1.4826 * 0.01));
  REQUIRE(scores["random_within_noise_at"] == nlohmann::ordered_json::array({3}));
  const auto& by = scores["strategies"];
  REQUIRE(by["random"]["score_at"]["1"].get<double>() == Approx(0.0));
  REQUIRE(by["tuned"]["score_at"]["1"].get<double>() == Approx(1.0));  // (2.0 - 0.9) / (2.0 - 0.9)
  REQUIRE(by["tuned"]["score_at"]["2"].get<double>() == Approx(1.0));  // (1.0 - 0.9) / (1.0 - 0.9)
  // No valid runtime yet: charged the slowest re-measured runtime (2.0).
  REQUIRE(by["none yet"]["score_at"]["1"].get<double>() == Approx(0.0));
  REQUIRE(by["none yet"]["score_at"]["2"].get<double>() == Approx(-10.0));
  REQUIRE(by["tuned"]["mean_score"].get<double>() == Approx(1.0));
  REQUIRE(by["tuned"]["score_at"]["3"].is_null());
  // The mean re-measured pick, which the comparison with the re-measured peers divides by.
  REQUIRE(by["random"]["pick_seconds_at"]["2"].get<double>() == Approx(1.0));
  REQUIRE(by["tuned"]["pick_seconds_at"]["3"].get<double>() == Approx(0.9));
  REQUIRE(by["none yet"]["pick_seconds_at"]["1"].get<double>() == Approx(2.0));
  // With config 7 the optimum, random search's pick (config 1) 5% off it is not within the noise
  // of rounds that agree to 1.5%, and 2% off it is.
  const auto at_three = [&](double config_1) {
    return remeasured_scores({random, tuned}, configs, {2.0, 0.9, config_1}, rounds, {"random", "tuned"}, {1, 2, 3})["strategies"]["tuned"]["score_at"]["3"];
  };
  REQUIRE(at_three(0.945).get<double>() == Approx(0.0));
  REQUIRE(at_three(0.918).is_null());

  nlohmann::ordered_json table = {{"random", nlohmann::ordered_json::object()}, {"tuned", nlohmann::ordered_json::object()}};
  nlohmann::ordered_json other = scores;
  other["strategies"]["tuned"]["score_at"]["1"] = 0.5;
  other["strategies"]["tuned"]["score_at"]["2"] = nullptr;
  add_remeasured_scores(table, {scores, other}, {1, 2});
  REQUIRE(table["tuned"]["remeasured_score_at"]["1"].get<double>() == Approx(0.75));
  REQUIRE(table["tuned"]["remeasured_score_at"]["2"].get<double>() == Approx(1.0));
  REQUIRE(table["tuned"]["remeasured_score"].get<double>() == Approx((1.0 + 1.0 + 0.5) / 3));
  REQUIRE(table["tuned"]["remeasured_spaces_at"]["2"] == 1);
}

TEST_CASE("the noise ceiling scores runs that measured the fastest configs once and kept the fastest figure") {
  // Config 7 re-measures at 1.1 but read 1.0 in round 1; config 1 is steady at 1.05, config 3 slow.
  // Round 1 keeps config 7 (valued at its other rounds: 1.15), rounds 2 and 3 keep config 1 (1.05).
  const LiveRun random{0, true, {at(3), at(3)}, {{at(3), 2.0}}};
  const std::vector<Config> configs = {at(3), at(7), at(1)};
  std::vector<std::vector<MeasureResult>> rounds = {
      {ok(2.0), ok(2.0), ok(2.0)}, {ok(1.0), ok(1.2), ok(1.1)}, {ok(1.05), ok(1.05), ok(1.05)}};
  const auto scores_of = [&](const std::vector<std::vector<MeasureResult>>& measured) {
    std::vector<std::optional<double>> values;
    for (const auto& r : measured) values.push_back(remeasured_seconds(r));
    return remeasured_scores({random}, configs, values, measured, {"random"}, {1, 2});
  };
  const auto scores = scores_of(rounds);
  const double kept = (1.15 + 1.05 + 1.05) / 3;
  REQUIRE(scores["noise_ceiling_pick_seconds"].get<double>() == Approx(kept));
  REQUIRE(scores["noise_ceiling_at"]["1"].get<double>() == Approx((2.0 - kept) / (2.0 - 1.05)));
  // A config that failed a round is not among those the ceiling's runs measured: config 7 out,
  // every round keeps config 1, and only the optimum's own noise is left (none here).
  rounds[1][2] = MeasureResult::failure(MeasureStatus::kTimeout, "hung");
  REQUIRE(scores_of(rounds)["noise_ceiling_at"]["2"].get<double>() == Approx(1.0));
  // One round: no other round to value the kept config at.
  const auto once = scores_of({{ok(2.0)}, {ok(1.0)}, {ok(1.05)}});
  REQUIRE(once["noise_ceiling_pick_seconds"].is_null());
  REQUIRE(once["noise_ceiling_at"]["1"].is_null());

  nlohmann::ordered_json other = scores;
  other["noise_ceiling_at"]["1"] = 0.5;
  other["noise_ceiling_at"]["2"] = nullptr;
  const auto averaged = remeasured_noise_ceiling({scores, other, nlohmann::ordered_json::object()}, {1, 2});
  const double ceiling = (2.0 - kept) / (2.0 - 1.05);
  REQUIRE(averaged["score_at"]["1"].get<double>() == Approx((ceiling + 0.5) / 2));
  REQUIRE(averaged["spaces_at"]["2"] == 1);
  REQUIRE(averaged["score"].get<double>() == Approx((ceiling + 0.5 + ceiling) / 3));
}

}  // namespace
}  // namespace perftune
