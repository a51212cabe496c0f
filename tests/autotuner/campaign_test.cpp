#include "autotuner/campaign/campaign.h"

#include <filesystem>
#include <fstream>

#include <catch2/catch.hpp>

#include "autotuner/campaign/campaign_runner.h"
#include "ir/data_path.h"
#include "ir/input_error.h"
#include "ir/record_log.h"
#include "search/toy_cost_model.h"
#include "test_support.h"

namespace perftune {
namespace {

nlohmann::json valid_campaign() {
  return nlohmann::json::parse(R"({
    "name": "toy",
    "source": {"path": "source.jsonl", "device": "gpu:toy"},
    "backend": {"type": "replay", "cost": {"per_measurement_seconds": 2.0, "runtime_multiple": 100}},
    "model": {"type": "none"},
    "strategy": {"type": "measured_evolution", "parents": 8, "mutation": {"several_knobs": 0.1}},
    "budget": {"measurements": 30},
    "top_k": 5,
    "epsilon": 0.1,
    "seed": 3,
    "output": "run"
  })");
}

TEST_CASE("campaign validation names the JSON path of what is wrong") {
  const auto [pointer, replacement, place, expected] = GENERATE(table<std::string, std::string, std::string, std::string>({
      {"/budgett", "{}", "$.budgett", "no such key"},
      {"/strategy/chians", "3", "$.strategy.chians", "no such key"},
      {"/strategy/type", "\"anealing\"", "$.strategy.type", "one of"},
      {"/strategy/parents", "\"many\"", "$.strategy.parents", "an integer"},
      {"/strategy/mutation/several_knobs", "-1", "$.strategy.mutation.several_knobs", "non-negative"},
      {"/budget/measurements", "0", "$.budget.measurements", "from 1 to 1000000"},
      {"/budget/measurements", "1000000000000", "$.budget.measurements", "from 1 to 1000000"},
      {"/budget", "{}", "$.budget", "positive \"measurements\""},
      {"/budget/hardware_seconds", "\"1h\"", "$.budget.hardware_seconds", "a number"},
      {"/backend/type", "\"tpu\"", "$.backend.type", "one of"},
      {"/backend/cost/per_measurment_seconds", "1", "$.backend.cost.per_measurment_seconds", "no such key"},
      {"/backend", R"({"type": "cpu", "threds": 2})", "$.backend.threds", "no such key"},
      {"/backend", R"({"type": "cpu", "time_budget_seconds": 0})", "$.backend.time_budget_seconds", "positive"},
      {"/model/type", "\"gnn\"", "$.model.type", "one of"},
      {"/model/checkpoint", "\"x.pt\"", "$.model.checkpoint", "no such key"},
      {"/epsilon", "1.5", "$.epsilon", "[0, 1]"},
      {"/top_k", "-4", "$.top_k", "positive integer"},
      {"/ramp_batches", "1", "$.ramp_batches", "true or false"},
      {"/seed", "\"abc\"", "$.seed", "an integer"},
      {"/source/program", "\"p.json\"", "$.source", "exactly one of"},
      {"/default", "[1, 2]", "$.default", "an object"},
      {"/search_time_share", "0", "$.search_time_share", "(0, 1]"},
      {"/search_time_share", "1.5", "$.search_time_share", "(0, 1]"},
      {"/search_time_share", "\"10%\"", "$.search_time_share", "a number"},
      {"/confirm_close_best", "1", "$.confirm_close_best", "[0, 1)"},
      {"/confirm_close_best", "-0.1", "$.confirm_close_best", "[0, 1)"},
      {"/strategy", R"({"type": "autoscheduler_sampling"})", "$.backend.type", "for strategy autoscheduler_sampling"},
  }));
  CAPTURE(pointer, replacement);
  nlohmann::json json = valid_campaign();
  json[nlohmann::json::json_pointer(pointer)] = nlohmann::json::parse(replacement);
  try {
    parse_campaign(json, "campaigns/toy.json");
    FAIL("accepted an invalid campaign");
  } catch (const InputError& error) {
    CAPTURE(error.what());
    CHECK(error.file() == "campaigns/toy.json");
    CHECK(error.place() == place);
    CHECK(std::string(error.what()).find(expected) != std::string::npos);
  }
}

TEST_CASE("campaign paths resolve against the campaign's folder and PERFTUNE_DATA") {
  const Campaign campaign = parse_campaign(valid_campaign(), "/work/x/configs/campaigns/toy.json");
  CHECK(campaign.source.path == "/work/x/configs/campaigns/source.jsonl");
  CHECK(campaign.output == "/work/x/configs/campaigns/run");
  CHECK(campaign.tuner.max_measurements == 30);
  CHECK(campaign.tuner.top_k == 5);
  CHECK_FALSE(campaign.tuner.ramp_batches);
  nlohmann::json ramped = valid_campaign();
  ramped["ramp_batches"] = true;
  CHECK(parse_campaign(ramped, "/work/x/configs/campaigns/toy.json").tuner.ramp_batches);
  CHECK(campaign.tuner.seed == 3);
  CHECK(campaign.strategy.type == "measured_evolution");
  CHECK(campaign.backend.replay_cost.runtime_multiple == 100);
  CHECK(resolve_config_path("${PERFTUNE_DATA}/kernel_tuner/gemm/x.json.gz", "/a") ==
        (std::filesystem::path(data_dir()) / "kernel_tuner/gemm/x.json.gz").string());
  CHECK(resolve_config_path("/abs/file", "/a") == "/abs/file");
  CHECK(resolve_config_path("../b/c", "/a/d") == "/a/b/c");
}

TEST_CASE("every bundled campaign config parses") {
  const auto dir = std::filesystem::path(source_path("configs/campaigns"));
  REQUIRE(std::filesystem::exists(dir));
  std::size_t count = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".json") continue;
    CAPTURE(entry.path().string());
    CHECK_NOTHROW(load_campaign(entry.path().string()));
    ++count;
  }
  CHECK(count >= 3);
}

// A recorded source for the campaign: every config of a 6x6x6 tile space, as a record log.
std::string write_source(const std::string& dir) {
  const SearchSpace space = testing::tile_space(6);
  const Config target{{8, 2, 16}};
  const std::string path = dir + "/source.jsonl";
  RecordLog log(path);
  for (const Config& config : space.enumerate()) {
    const MeasureResult result = config.values[0] == 32 ? MeasureResult::failure(MeasureStatus::kCompileError, "recorded")
                                                        : MeasureResult::from_repeats({testing::toy_seconds(config, target)}, 0.0);
    log.append(Record{"gpu:toy", "00000000000000bb", "toy_matmul", space.knob_names(), config, result, 0.0});
  }
  return path;
}

TEST_CASE("a campaign runs end to end, writes its log and summary, and resumes from them") {
  const std::string dir = scratch_dir("campaign_end_to_end");
  write_source(dir);
  nlohmann::json json = valid_campaign();
  json["default"] = {{"tile.out.0", 1}, {"tile.out.1", 1}, {"tile.red", 1}};
  const std::string file = dir + "/toy.json";
  std::ofstream(file) << json.dump(2);
  const Campaign campaign = load_campaign(file);

  const CampaignSummary summary = run_campaign(campaign);
  REQUIRE(summary.tuning);
  const TuningDetails& tuning = *summary.tuning;
  CHECK(summary.measurements == 30);
  CHECK(summary.device == "replay:gpu:toy");
  CHECK(summary.strategy == "measured_evolution");
  CHECK(summary.best_after.size() == 30);
  REQUIRE(summary.best_seconds);
  REQUIRE(summary.default_seconds);
  const double best = *summary.best_seconds, reference = *summary.default_seconds;
  CHECK(reference == Approx(testing::toy_seconds(Config{{1, 1, 1}}, Config{{8, 2, 16}})));
  CHECK(tuning.speedup_over_default.value() == Approx(reference / best));
  CHECK(tuning.optimum_seconds.value() == Approx(1e-3));
  CHECK(summary.best_after.back() == best);
  // Recorded without costs: 2 s per measurement + 100 x the runtime (failures: 2 s).
  CHECK(summary.hardware_seconds > 60.0);
  CHECK(tuning.search_seconds <= summary.wall_seconds);
  REQUIRE(std::filesystem::exists(dir + "/run/summary.json"));
  // The file is the summary returned, load time included (it is written once, at the end), and
  // reads back to it.
  const nlohmann::ordered_json written = nlohmann::ordered_json::parse(std::ifstream(dir + "/run/summary.json"));
  CHECK(written == to_json(summary));
  const nlohmann::json unordered = nlohmann::json::parse(written.dump());
  CHECK(nlohmann::json::parse(to_json(campaign_summary_from_json(unordered, "summary.json")).dump()) == unordered);
  CHECK(summary.load_seconds >= 0.0);
  CHECK_FALSE(tuning.search_time_share);  // a replay is never time-limited
  CHECK_FALSE(tuning.confirm_best);        // a plain replay answers the same every time
  CHECK(tuning.search_share >= 0.0);
  CHECK(tuning.search_share <= 1.0);
  CHECK(tuning.outside_backend.propose_seconds <= tuning.search_seconds);
  CHECK(written.at("outside_backend").contains("model_cache_hits") == tuning.outside_backend.model.has_value());
  CHECK(RecordLog::load(dir + "/run/records.jsonl").records.size() == 30);

  const CampaignSummary again = run_campaign(campaign);  // a finished campaign resumes to the same end
  CHECK(again.tuning->from_log == 30);
  CHECK(again.best_after == summary.best_after);
  CHECK(again.tuning->best_config == tuning.best_config);
}

TEST_CASE("a summary without the curves every run has names its file and field") {
  nlohmann::json json = nlohmann::json::parse(R"({"campaign": "c", "kernel": "k", "device": "d", "strategy": "s", "seed": 1,
                                                   "measurements": 2, "best_after": [null, 0.5], "hardware_after": [1, 2]})");
  try {
    campaign_summary_from_json(json, "run/summary.json");
    FAIL("read a summary without search_after");
  } catch (const InputError& error) {
    CHECK(error.file() == "run/summary.json");
    CHECK(error.place() == "$");
    CHECK(std::string(error.what()).find("search_after") != std::string::npos);
  }
  json["search_after"] = {0.0, 0.0};
  const CampaignSummary summary = campaign_summary_from_json(json, "run/summary.json");
  CHECK(summary.best_after == std::vector<std::optional<double>>{std::nullopt, 0.5});
  CHECK_FALSE(summary.tuning);  // a peer's samples: no budget loop ran
}

TEST_CASE("campaign problems found while building name their place") {
  const std::string dir = scratch_dir("campaign_errors");
  write_source(dir);
  const auto [pointer, replacement, place, expected] = GENERATE(table<std::string, std::string, std::string, std::string>({
      {"/source/kernel", "\"conv\"", "$.source.kernel", "toy_matmul"},
      {"/source/device", "\"A100\"", "$.source", "gpu:toy"},
      {"/default", R"({"tile.out.0": 3, "tile.out.1": 1, "tile.red": 1})", "$.default", "inside the kernel's space"},
      {"/default", R"({"tile.out.0": 1})", "$.default", "missing knob"},
      {"/backend", R"({"type": "cpu"})", "$.backend.type", "has no graph to run"},
      {"/model", R"({"type": "learned", "checkpoint": "m.pt"})", "$.model.checkpoint", "does not exist"},
      {"/source", R"({"program": "p.json", "kernel": "fusion"})", "$.source.program", "does not exist"},
  }));
  CAPTURE(pointer, replacement);
  nlohmann::json json = valid_campaign();
  json[nlohmann::json::json_pointer(pointer)] = nlohmann::json::parse(replacement);
  const Campaign campaign = parse_campaign(json, dir + "/toy.json");
  try {
    run_campaign(campaign);
    FAIL("ran an invalid campaign");
  } catch (const InputError& error) {
    CAPTURE(error.what());
    CHECK(error.place() == place);
    CHECK(std::string(error.what()).find(expected) != std::string::npos);
  }
}

}  // namespace
}  // namespace perftune
