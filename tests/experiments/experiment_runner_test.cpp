#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <utility>

#include "experiments/experiment.h"
#include "experiments/experiment_plots.h"
#include "experiments/experiment_runner.h"
#include "experiments/model_study/model_study.h"
#include "ir/file_io.h"
#include "ir/input_error.h"
#include "ir/json_view.h"
#include "test_support.h"
#include "experiment_fixtures.h"

using namespace perftune;
using perftune::testing::line_count;
using perftune::testing::write_toy_cache;
namespace fs = std::filesystem;

namespace {

nlohmann::json toy_experiment(const std::string& cache_path) {
  return {{"name", "toy"},
          {"spaces", {{{"name", "toy/gpu"}, {"source", {{"path", cache_path}}}}}},
          {"strategies", {{{"name", "random"}, {"strategy", {{"type", "random"}}}},
                          {{"name", "SA measured"}, {"strategy", {{"type", "measured_annealing"}}}}}},
          {"backend", {{"type", "replay"}}},
          {"budget", {{"measurements", 20}}},
          {"top_k", 4},
          {"seeds", 3},
          {"report_budgets", {5, 10, 20}}};
}

// A scratch folder NAME holding the toy recorded space: {the folder, the space's path}.
std::pair<std::string, std::string> toy_space_dir(const std::string& name) {
  const std::string dir = scratch_dir(name);
  write_toy_cache(dir + "/toy_cache.json");
  return {dir, dir + "/toy_cache.json"};
}

// An experiment run into DIR/out on JOBS workers, without plots.
ExperimentOptions run_into(const std::string& dir, int jobs) {
  ExperimentOptions options;
  options.jobs = jobs;
  options.output = dir + "/out";
  options.plots = false;
  return options;
}

}  // namespace

TEST_CASE("a tiny experiment end to end writes curves, a summary and PNG/SVG plots, and a rerun reuses its runs") {
  const auto [dir, cache] = toy_space_dir("experiment_end_to_end");
  const Experiment experiment = parse_experiment(toy_experiment(cache), dir + "/toy.json");
  ExperimentOptions options = run_into(dir, 2);
  options.plots = true;
  std::ostringstream progress;
  options.progress = &progress;
  const auto summary = run_experiment(experiment, options);

  REQUIRE(line_count(dir + "/out/runs.csv") == 1 + 2 * 3 * 20);  // header + strategies x seeds x budget
  REQUIRE(progress.str().find("6/6 runs") != std::string::npos);
  for (const char* name : {"random", "SA measured"}) {
    CAPTURE(name);
    const auto& row = summary["strategies"][name];
    REQUIRE(row["score"].is_number());
    REQUIRE(row["score_standard_error"].get<double>() >= 0.0);  // 3 seeds: a spread to estimate
    for (const char* budget : {"5", "10", "20"}) REQUIRE(row["speedup_at"][budget].get<double>() > 0.0);
  }
  const auto& space = summary["spaces"][0];
  REQUIRE(space["configs"] == 64);
  REQUIRE(space["failed"] == 4);
  REQUIRE(space["reference"] == "median");  // the toy cache has no space.json, so no default
  REQUIRE(space.at("optimum_noise").is_null());  // nor repeats ("times")
  REQUIRE(fs::exists(dir + "/out/summary.json"));
  // The time-axis score beside P over measurements, both default windows, for every strategy.
  for (const char* name : {"random", "SA measured"})
    for (const char* window : {"0.5-0.96", "0.01-0.95"}) {
      CAPTURE(name, window);
      REQUIRE(summary["strategies"][name]["time_score"][window].is_number());
    }
  REQUIRE(space["time_windows"].size() == 2);
  REQUIRE(space["time_windows"][0]["seconds_per_config"].get<double>() == Approx(0.06));  // 50 + 10 ms per config
  for (const char* image : {"speedup_toy_gpu", "score", "score_vs_budget", "score_vs_time_0.5-0.96", "score_vs_time_0.01-0.95"})
    for (const char* ext : {".png", ".svg"}) {
      const fs::path path = fs::path(dir) / "out/plots" / (std::string(image) + ext);
      CAPTURE(path);
      REQUIRE(fs::exists(path));
      REQUIRE(fs::file_size(path) > 1000);
    }

  std::ostringstream log;  // a log file, not a terminal: one line per tenth of the runs, no redraws
  options.progress = &log;
  options.progress_redraws = false;
  const auto again = run_experiment(experiment, options);
  REQUIRE(log.str().find('\r') == std::string::npos);
  const std::string bar = "[experiment] [";
  std::size_t bar_lines = 0;
  for (std::size_t at = log.str().find(bar); at != std::string::npos; at = log.str().find(bar, at + 1)) ++bar_lines;
  REQUIRE(bar_lines == 6);  // 6 runs: each crosses a tenth
  REQUIRE(log.str().find("6/6 runs") != std::string::npos);
  REQUIRE(again["reused_runs"] == 6);
  REQUIRE(again["strategies"] == summary["strategies"]);
  REQUIRE(render_experiment_plots(dir + "/out").size() == 10);
}

TEST_CASE("a rerun runs again, and keeps aside, the runs of a strategy redefined under the same name") {
  const auto [dir, cache] = toy_space_dir("experiment_redefined");
  nlohmann::json json = toy_experiment(cache);
  ExperimentOptions options = run_into(dir, 2);
  const auto first = run_experiment(parse_experiment(json, dir + "/toy.json"), options);
  REQUIRE(first["changed_runs"] == 0);
  const fs::path sa_seed_1 = fs::path(dir) / "out/runs/toy/gpu/SA measured/seed_1";
  REQUIRE(fs::exists(sa_seed_1 / "run_identity"));

  json["strategies"][1]["strategy"]["chains"] = 2;  // same name, another strategy
  std::ostringstream progress;
  options.progress = &progress;
  options.progress_redraws = false;
  const auto second = run_experiment(parse_experiment(json, dir + "/toy.json"), options);
  REQUIRE(second["reused_runs"] == 3);   // random: unchanged
  REQUIRE(second["changed_runs"] == 3);  // SA measured: every seed again
  REQUIRE_THAT(progress.str(), Catch::Contains("3 run(s) defined differently"));
  const std::string old_identity = [&] {
    for (const auto& entry : fs::directory_iterator(sa_seed_1.parent_path()))
      if (entry.path().filename().string().starts_with("seed_1.stale-")) return entry.path().filename().string();
    return std::string();
  }();
  CAPTURE(old_identity);
  REQUIRE(!old_identity.empty());  // the first definition's measurements are kept, not deleted
  REQUIRE(line_count((sa_seed_1.parent_path() / old_identity / "records.jsonl").string()) > 0);

  const auto third = run_experiment(parse_experiment(json, dir + "/toy.json"), options);
  REQUIRE(third["reused_runs"] == 6);
  REQUIRE(third["changed_runs"] == 0);
}

TEST_CASE("an experiment measured in sittings: later seeds first, a stop time between runs, the rest on the next call") {
  const auto [dir, cache] = toy_space_dir("experiment_sittings");
  const Experiment experiment = parse_experiment(toy_experiment(cache), dir + "/toy.json");
  ExperimentOptions options = run_into(dir, 1);

  // Seeds 2 and 3 alone, as a sitting that leaves seed 1 for later would run them.
  options.first_seed = 2;
  options.seeds = 2;
  const auto later_seeds = run_experiment(experiment, options);
  REQUIRE(later_seeds["first_seed"] == 2);
  REQUIRE(later_seeds["runs"] == 4);
  REQUIRE(!fs::exists(dir + "/out/runs/toy/gpu/random/seed_1"));
  REQUIRE(fs::exists(dir + "/out/runs/toy/gpu/random/seed_3/summary.json"));

  // The whole experiment with a stop time already past: the finished runs count, nothing starts,
  // no summary of a part is written in place of the whole one.
  options.first_seed.reset();
  options.seeds.reset();
  fs::remove(dir + "/out/summary.json");
  options.stop_after_seconds = 0.0;
  const auto stopped = run_experiment(experiment, options);
  REQUIRE(stopped["stopped_early"] == true);
  REQUIRE(stopped["finished_runs"] == 4);
  REQUIRE(stopped["runs"] == 6);
  REQUIRE(!fs::exists(dir + "/out/runs/toy/gpu/random/seed_1/summary.json"));
  REQUIRE(!fs::exists(dir + "/out/summary.json"));

  options.stop_after_seconds.reset();
  const auto whole = run_experiment(experiment, options);
  REQUIRE(whole["reused_runs"] == 4);  // seeds 2 and 3 were not measured again
  REQUIRE(whole["runs"] == 6);
  REQUIRE(fs::exists(dir + "/out/summary.json"));
}

TEST_CASE("a run's identity follows its definition and the content of the checkpoint it loads") {
  const auto [dir, cache] = toy_space_dir("experiment_run_identity");
  // run_identity only reads these files' bytes; a real checkpoint is not needed to tell them apart.
  const std::string checkpoint = dir + "/model.json";
  std::ofstream(checkpoint) << "{\"weights\": 1}";
  std::ofstream(dir + "/model.pt") << "first weights";
  nlohmann::json json = toy_experiment(cache);
  json["strategies"][1]["model"] = {{"type", "learned"}, {"checkpoint", checkpoint}};
  const Experiment experiment = parse_experiment(json, dir + "/toy.json");
  const std::string identity = run_identity(experiment, 0, 1, 1);
  REQUIRE(identity.size() == 16);
  REQUIRE(run_identity(experiment, 0, 1, 1) == identity);
  REQUIRE(run_identity(experiment, 0, 1, 2) != identity);  // another seed
  REQUIRE(run_identity(experiment, 0, 0, 1) != identity);  // another strategy

  std::ofstream(dir + "/model.pt") << "retrained weights";  // perftune train wrote over it
  REQUIRE(run_identity(experiment, 0, 1, 1) != identity);
}

TEST_CASE("an experiment's re-measuring plan is read and checked, and leaves its runs' identity alone") {
  const auto [dir, cache] = toy_space_dir("experiment_remeasure_plan");
  nlohmann::json json = toy_experiment(cache);
  const std::string identity = run_identity(parse_experiment(json, dir + "/toy.json"), 0, 1, 1);
  json["remeasure"] = {{"repeats", 5}};
  const Experiment experiment = parse_experiment(json, dir + "/toy.json");
  REQUIRE(experiment.remeasure->repeats == 5);
  REQUIRE(experiment.remeasure->top == 10);
  // Added to an experiment half measured, it must not run its runs again.
  REQUIRE(run_identity(experiment, 0, 1, 1) == identity);
  json["remeasure"] = {{"repeats", 0}};
  REQUIRE_THROWS_WITH(parse_experiment(json, dir + "/toy.json"), Catch::Contains("$.remeasure.repeats"));
  json["remeasure"] = {{"rounds", 3}};
  REQUIRE_THROWS_WITH(parse_experiment(json, dir + "/toy.json"), Catch::Contains("$.remeasure"));
  // Another experiment's output whose best configs are re-measured beside these runs' picks.
  std::filesystem::create_directories(dir + "/runs/long");
  json["remeasure"] = {{"references", {"runs/long"}}};
  REQUIRE(parse_experiment(json, dir + "/toy.json").remeasure->references ==
          std::vector<std::string>{(std::filesystem::path(dir) / "runs/long").string()});
  // A folder not there yet (a campaign not unpacked on this machine) parses, and stops the run before it starts.
  json["remeasure"] = {{"references", {"runs/never_run"}}};
  const Experiment unpacked_elsewhere = parse_experiment(json, dir + "/toy.json");
  REQUIRE_THROWS_WITH(run_experiment(unpacked_elsewhere, run_into(dir, 1)), Catch::Contains("$.remeasure.references[0]"));
  REQUIRE_FALSE(std::filesystem::exists(dir + "/out/runs"));
}

TEST_CASE("an experiment's measurement memo serves one sitting's figures unless told otherwise, and leaves its runs' identity alone") {
  const auto [dir, cache] = toy_space_dir("experiment_memo_scope");
  nlohmann::json json = toy_experiment(cache);
  const Experiment by_default = parse_experiment(json, dir + "/toy.json");
  REQUIRE(by_default.measure_once);
  REQUIRE(by_default.memo_scope == MemoScope::kSitting);
  json["measure_once"] = "experiment";
  const Experiment every_sitting = parse_experiment(json, dir + "/toy.json");
  REQUIRE(every_sitting.memo_scope == MemoScope::kExperiment);
  REQUIRE(run_identity(every_sitting, 0, 1, 1) == run_identity(by_default, 0, 1, 1));
  json["measure_once"] = false;
  REQUIRE_FALSE(parse_experiment(json, dir + "/toy.json").measure_once);
  json["measure_once"] = "weekly";
  REQUIRE_THROWS_WITH(parse_experiment(json, dir + "/toy.json"), Catch::Contains("$.measure_once"));
}

TEST_CASE("a checkpoint trained again to the same weights keeps its runs' identity; another training does not") {
  const auto [dir, cache] = toy_space_dir("experiment_run_identity_retrained");
  const std::string checkpoint = dir + "/model.json";
  // The training report as ensure_pretrained writes it into the checkpoint.
  auto write_checkpoint = [&](double seconds, double member_seconds, int best_epoch) {
    const nlohmann::json training = {{"best_epoch", best_epoch},
                                     {"seconds", seconds},
                                     {"members", {{{"seed", 1}, {"best_epoch", best_epoch}, {"seconds", member_seconds}}}}};
    std::ofstream(checkpoint) << nlohmann::json{{"weights", "model.pt"}, {"extra", {{"training", training}}}}.dump(2);
  };
  write_checkpoint(101.4, 19.6, 7);
  std::ofstream(dir + "/model.pt") << "weights";
  nlohmann::json json = toy_experiment(cache);
  json["strategies"][1]["model"] = {{"type", "learned"}, {"checkpoint", checkpoint}};
  const Experiment experiment = parse_experiment(json, dir + "/toy.json");
  const std::string identity = run_identity(experiment, 0, 1, 1);

  write_checkpoint(142.7, 27.1, 7);  // the same training on a busier machine
  REQUIRE(run_identity(experiment, 0, 1, 1) == identity);
  write_checkpoint(142.7, 27.1, 8);  // a training that stopped elsewhere
  REQUIRE(run_identity(experiment, 0, 1, 1) != identity);
  write_checkpoint(101.4, 19.6, 7);
  std::ofstream(dir + "/model.pt") << "other weights";
  REQUIRE(run_identity(experiment, 0, 1, 1) != identity);
}

TEST_CASE("an experiment's ramped batches reach every run, and change its identity only when on") {
  const auto [dir, cache] = toy_space_dir("experiment_ramp");
  const Experiment plain = parse_experiment(toy_experiment(cache), dir + "/toy.json");
  nlohmann::json json = toy_experiment(cache);
  json["ramp_batches"] = true;
  const Experiment ramped = parse_experiment(json, dir + "/toy.json");
  CHECK(ramped.ramp_batches);
  CHECK(experiment_campaign(ramped, 0, 1, 1, dir + "/run").tuner.ramp_batches);
  CHECK_FALSE(experiment_campaign(plain, 0, 1, 1, dir + "/run").tuner.ramp_batches);
  CHECK(run_identity(ramped, 0, 1, 1) != run_identity(plain, 0, 1, 1));
  json["ramp_batches"] = false;  // off is the default: earlier runs keep their identity
  CHECK(run_identity(parse_experiment(json, dir + "/toy.json"), 0, 1, 1) == run_identity(plain, 0, 1, 1));
}

TEST_CASE("a strategy's close-best confirmation reaches its runs only, and changes their identity only when set") {
  const auto [dir, cache] = toy_space_dir("experiment_close_best");
  const Experiment plain = parse_experiment(toy_experiment(cache), dir + "/toy.json");
  nlohmann::json json = toy_experiment(cache);
  json["strategies"][1]["confirm_close_best"] = 0.1;
  const Experiment confirming = parse_experiment(json, dir + "/toy.json");
  CHECK(experiment_campaign(confirming, 0, 1, 1, dir + "/run").tuner.confirm_close_best == 0.1);
  CHECK(experiment_campaign(confirming, 0, 0, 1, dir + "/run").tuner.confirm_close_best == 0.0);
  CHECK(run_identity(confirming, 0, 1, 1) != run_identity(plain, 0, 1, 1));
  CHECK(run_identity(confirming, 0, 0, 1) == run_identity(plain, 0, 0, 1));
}

TEST_CASE("a run's identity does not depend on where the experiment's output folder is") {
  const auto [dir, cache] = toy_space_dir("experiment_run_identity_moved");
  // Pre-trained checkpoints are named under the output folder: a copy of the folder elsewhere
  // holds the same models, so its finished runs are the same runs.
  auto experiment_in = [&](const std::string& output, const std::string& weights) {
    fs::create_directories(output + "/models");
    std::ofstream(output + "/models/model.json") << "{\"weights\": 1}";
    std::ofstream(output + "/models/model.pt") << weights;
    nlohmann::json json = toy_experiment(cache);
    json["output"] = output;
    json["strategies"][1]["model"] = {{"type", "learned"}, {"checkpoint", output + "/models/model.json"}};
    return parse_experiment(json, dir + "/toy.json");
  };
  const std::string identity = run_identity(experiment_in(dir + "/first", "weights"), 0, 1, 1);
  REQUIRE(run_identity(experiment_in(dir + "/copy", "weights"), 0, 1, 1) == identity);
  REQUIRE(run_identity(experiment_in(dir + "/other", "other weights"), 0, 1, 1) != identity);
}

TEST_CASE("a run's identity follows the content of its space's file, not where the file lies") {
  const auto [dir, cache] = toy_space_dir("experiment_run_identity_content");
  const Experiment here = parse_experiment(toy_experiment(cache), dir + "/toy.json");
  const std::string identity = run_identity(here, 0, 1, 1);
  // The same recording at another path: a checkout moved, the data mounted elsewhere.
  fs::create_directories(dir + "/elsewhere");
  fs::copy_file(cache, dir + "/elsewhere/toy_cache.json", fs::copy_options::overwrite_existing);
  const Experiment moved = parse_experiment(toy_experiment(dir + "/elsewhere/toy_cache.json"), dir + "/toy.json");
  REQUIRE(run_identity(moved, 0, 1, 1) == identity);
  REQUIRE(path_named_run_identity(moved, 0, 1, 1) != path_named_run_identity(here, 0, 1, 1));
  // Edited in place, it is another space: its old curves must not be reported as its own.
  std::ofstream(dir + "/elsewhere/toy_cache.json", std::ios::app) << "\n";
  REQUIRE(run_identity(moved, 0, 1, 1) != identity);
}

TEST_CASE("runs that recorded their path-named identity are reused, and recorded again under their content-named one") {
  const auto [dir, cache] = toy_space_dir("experiment_path_named_identity");
  const Experiment experiment = parse_experiment(toy_experiment(cache), dir + "/toy.json");
  run_experiment(experiment, run_into(dir, 2));
  auto identity_file = [&](std::size_t strategy, int seed) {
    return dir + "/out/runs/toy/gpu/" + experiment.strategies[strategy].name + "/seed_" + std::to_string(seed) + "/run_identity";
  };
  for (std::size_t strategy = 0; strategy < 2; ++strategy)
    for (int seed = 1; seed <= 3; ++seed)
      std::ofstream(identity_file(strategy, seed)) << path_named_run_identity(experiment, 0, strategy, seed) << "\n";

  const auto again = run_experiment(experiment, run_into(dir, 2));
  REQUIRE(again["reused_runs"] == 6);
  REQUIRE(again["changed_runs"] == 0);
  REQUIRE(read_file(identity_file(1, 2)) == run_identity(experiment, 0, 1, 2) + "\n");
}

TEST_CASE("an experiment's mistakes name their place in the experiment file") {
  const std::string dir = scratch_dir("experiment_errors");
  write_toy_cache(dir + "/toy_cache.json");
  const auto [place, edit] = GENERATE(table<std::string, std::function<void(nlohmann::json&)>>({
      {"$.strategies[1].strategy", [](nlohmann::json& j) { j["strategies"][1]["strategy"]["chainz"] = 3; }},
      {"$.spaces[0].source", [](nlohmann::json& j) { j["spaces"][0]["source"]["pth"] = "x"; }},
      {"$.seeds", [](nlohmann::json& j) { j["seeds"] = 0; }},
      {"$.strategies[1].name", [](nlohmann::json& j) { j["strategies"][1]["name"] = "random"; }},
      {"$.strategies[1].confirm_close_best", [](nlohmann::json& j) { j["strategies"][1]["confirm_close_best"] = 1.0; }},
      {"$.budget", [](nlohmann::json& j) { j["budget"] = nlohmann::json::object(); }},
      {"$.time_windows[1]", [](nlohmann::json& j) { j["time_windows"] = {{{"start", 0.5}, {"end", 0.96}}, {{"start", 0.9}, {"end", 0.5}}}; }},
      {"$.time_windows[0].stop", [](nlohmann::json& j) { j["time_windows"] = {{{"start", 0.5}, {"stop", 0.96}}}; }},
      // Counts no machine finishes: refused here, not after a bad_alloc.
      {"$.seeds", [](nlohmann::json& j) { j["seeds"] = 1e9; }},
      {"$.budget.measurements", [](nlohmann::json& j) { j["budget"]["measurements"] = 1e12; }},
      {"$.report_budgets[1]", [](nlohmann::json& j) { j["report_budgets"] = {5, 1e15}; }},
  }));
  nlohmann::json json = toy_experiment(dir + "/toy_cache.json");
  edit(json);
  CAPTURE(place);
  try {
    parse_experiment(json, "toy.json");
    FAIL("accepted");
  } catch (const InputError& error) {
    CAPTURE(error.what());
    REQUIRE(error.file() == "toy.json");
    REQUIRE(error.place().starts_with(place));
  }
}

TEST_CASE("plot refuses a summary it would draw wrong, naming the file and the place") {
  const auto [dir, cache] = toy_space_dir("experiment_bad_summary");
  run_experiment(parse_experiment(toy_experiment(cache), dir + "/toy.json"), run_into(dir, 2));
  const nlohmann::json good = parse_json_file(dir + "/out/summary.json");
  REQUIRE(good["max_budget"] == 20);
  const auto [place, edit] = GENERATE(table<std::string, std::function<void(nlohmann::json&)>>({
      {"$", [](nlohmann::json& j) { j = nlohmann::json::array({j}); }},
      {"$.max_budget", [](nlohmann::json& j) { j["max_budget"] = 1e15; }},
      {"$.max_budget", [](nlohmann::json& j) { j["max_budget"] = -5; }},
      {"$.seeds", [](nlohmann::json& j) { j["seeds"] = 0; }},
      {"$.report_budgets", [](nlohmann::json& j) { j["report_budgets"] = std::vector<int>(21, 1); }},
      {"$.report_budgets[0]", [](nlohmann::json& j) { j["report_budgets"][0] = 21; }},
      {"$.spaces", [](nlohmann::json& j) { j["spaces"] = nlohmann::json::array(); }},
      {"$.strategies", [](nlohmann::json& j) { j["strategies"] = nlohmann::json::object(); }},
      {"$.spaces[0].optimum_seconds", [](nlohmann::json& j) { j["spaces"][0]["optimum_seconds"] = 0; }},
      {"$.spaces[0].random_expected_best[3]", [](nlohmann::json& j) { j["spaces"][0]["random_expected_best"][3] = -1e-3; }},
      {"$.spaces[0].random_expected_best", [](nlohmann::json& j) { j["spaces"][0]["random_expected_best"].erase(0); }},
      {"$.spaces[0].strategies.random.score", [](nlohmann::json& j) { j["spaces"][0]["strategies"]["random"]["score"].erase(0); }},
  }));
  nlohmann::json summary = good;
  edit(summary);
  CAPTURE(place);
  const std::string bad = scratch_dir("experiment_bad_summary_edited");
  std::ofstream(bad + "/summary.json") << summary.dump();
  try {
    render_experiment_plots(bad);
    FAIL("accepted");
  } catch (const InputError& error) {
    CAPTURE(error.what());
    REQUIRE(error.file() == bad + "/summary.json");
    REQUIRE(error.place() == place);
  }
  REQUIRE_FALSE(fs::exists(bad + "/plots"));  // nothing drawn from it
}

TEST_CASE("every bundled experiment config parses as perftune experiment reads it") {
  const fs::path dir = source_path("configs/experiments");
  REQUIRE(fs::exists(dir));
  std::size_t count = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() != ".json") continue;
    const std::string path = entry.path().string();
    CAPTURE(path);
    const nlohmann::json json = parse_json_file(path);
    if (is_model_study(json))
      CHECK_NOTHROW(parse_model_study(json, path));
    else
      CHECK_NOTHROW(parse_experiment(json, path));
    ++count;
  }
  CHECK(count >= 5);
}

TEST_CASE("an experiment naming its targets and sources tunes the targets alone, each on the sources") {
  const std::string dir = scratch_dir("experiment_roles");
  const char* devices[] = {"GPU A", "GPU B", "GPU D", "GPU E"};
  nlohmann::json json = toy_experiment("unused");
  json["spaces"] = nlohmann::json::array();
  for (int i = 0; i < 4; ++i) {
    const std::string path = dir + "/cache_" + std::to_string(i) + ".json";
    write_toy_cache(path, devices[i], 1.0 + 0.5 * i, 3 + i);
    json["spaces"].push_back({{"name", "toy/" + std::to_string(i)}, {"source", {{"path", path}}}, {"role", i < 2 ? "source" : "target"}});
  }
  json["strategies"] = {{{"name", "random"}, {"strategy", {{"type", "random"}}}},
                        {{"name", "recorded"},
                         {"strategy", {{"type", "annealing"}, {"chains", 4}, {"steps", 10}}},
                         {"model", {{"type", "recorded"}, {"sources", "other_devices"}, {"residual", nlohmann::json::object()}}}}};
  json["seeds"] = 2;
  const Experiment experiment = parse_experiment(json, dir + "/roles.json");
  ExperimentOptions options = run_into(dir, 2);
  const auto summary = run_experiment(experiment, options);
  REQUIRE(summary["spaces"].size() == 2);  // the targets
  CHECK(summary["spaces"][0]["name"] == "toy/2");
  CHECK(summary["spaces"][1]["name"] == "toy/3");
  CHECK(summary["source_only_spaces"] == nlohmann::json({"toy/0", "toy/1"}));
  CHECK(line_count(dir + "/out/runs.csv") == 1 + 2 * 2 * 2 * 20);  // header + targets x strategies x seeds x budget
  CHECK_FALSE(fs::exists(dir + "/out/runs/toy/0"));
  // Which spaces each target draws on is pretraining_sources' rule (pretraining_test.cpp): the
  // recorded reference above ran on the two sources; no run exists of a source-only space.
  json["spaces"][2]["role"] = "neither";
  REQUIRE_THROWS_WITH(parse_experiment(json, dir + "/roles.json"), Catch::Contains("$.spaces[2].role"));
  for (auto& space : json["spaces"]) space["role"] = "source";
  REQUIRE_THROWS_WITH(parse_experiment(json, dir + "/roles.json"), Catch::Contains("at least one space to tune"));
}

TEST_CASE("a live experiment on the Halide backend runs a tuner and Adams2019's sampling side by side", "[halide]") {
  const std::string dir = scratch_dir("experiment_live_halide");
  std::ofstream(dir + "/mm.json") << R"({"name": "mm", "ops": [
    {"name": "a", "opcode": "parameter", "shape": [48, 32], "parameter_number": 0},
    {"name": "b", "opcode": "parameter", "shape": [32, 40], "parameter_number": 1},
    {"name": "y", "opcode": "dot", "shape": [48, 40], "operands": ["a", "b"], "dot": {"lhs_contracting": [1], "rhs_contracting": [0]}}]})";
  const nlohmann::json json = {
      {"name", "live"},
      {"spaces", {{{"name", "mm/program"}, {"source", {{"program", "mm.json"}, {"kernel", "program"}}}}}},
      {"strategies", {{{"name", "random"}, {"strategy", {{"type", "random"}}}},
                      {{"name", "Adams2019 sampling"}, {"strategy", {{"type", "autoscheduler_sampling"}}}}}},
      {"backend", {{"type", "cpu"}, {"min_repeats", 3}, {"max_repeats", 3}, {"time_budget_seconds", 0.02}, {"parallel_guard_attempts", 0}}},
      {"budget", {{"measurements", 3}}},
      {"top_k", 3},
      {"seeds", 2},
      {"report_budgets", {1, 3}},
      {"remeasure", {{"repeats", 2}, {"top", 2}}}};
  ExperimentOptions options = run_into(dir, 1);
  const auto summary = run_experiment(parse_experiment(json, dir + "/live.json"), options);
  for (const char* name : {"random", "Adams2019 sampling"}) {
    CAPTURE(name);
    REQUIRE(summary["strategies"][name]["speedup_at"]["3"].get<double>() > 0.0);
  }
  // The two random runs measured 3 configs each, both the default first: the second read it from
  // the experiment's memo.
  REQUIRE(summary["measured_once"]["configs"].get<std::size_t>() >= 3);
  REQUIRE(summary["measured_once"]["configs"].get<std::size_t>() <= 5);
  REQUIRE(summary["measured_once"]["scope"] == "sitting");
  REQUIRE(std::filesystem::exists(dir + "/out/measured_once.jsonl"));
  // The peers, measured once for the space, and each strategy against the fastest autoscheduler.
  const auto& space = summary["spaces"][0];
  REQUIRE(space["peers"]["OpenBLAS"]["kind"] == "library");
  const std::string fastest = space["fastest_scheduler"]["name"];
  REQUIRE(space["peers"][fastest]["kind"] == "scheduler");
  REQUIRE(summary["strategies"]["random"]["vs_fastest_scheduler"]["3"]["spaces"] == 1);
  REQUIRE(summary["strategies"]["random"]["vs_fastest_scheduler"]["3"]["geomean"].get<double>() > 0.0);
  // The runs' picks and fastest configs measured twice more, in two logged rounds.
  const auto& remeasured = space["remeasured"];
  REQUIRE(remeasured["configs"].get<std::size_t>() >= 1);
  REQUIRE(remeasured["repeats"] == 2);
  REQUIRE(remeasured["optimum_seconds"].get<double>() > 0.0);
  // Adams2019's sampling times its own schedules, not configs of the space: it has no re-measured score.
  REQUIRE(remeasured["strategies"]["Adams2019 sampling"]["score_at"]["3"].is_null());
  REQUIRE(summary["strategies"]["random"].contains("remeasured_score"));
  for (const char* round : {"round_1.jsonl", "round_2.jsonl"}) REQUIRE(std::filesystem::exists(dir + "/out/remeasured/mm_program/" + round));
  // The peers measured again in the same rounds, and the picks against them side by side.
  for (const char* round : {"peers_round_1.json", "peers_round_2.json"})
    REQUIRE(std::filesystem::exists(dir + "/out/remeasured/mm_program/" + round));
  const std::string fastest_again = remeasured["fastest_scheduler"]["name"];
  REQUIRE(remeasured["peers"][fastest_again]["round_seconds"].size() == 2);
  const double peer_seconds = remeasured["peers"][fastest_again]["seconds"].get<double>();
  REQUIRE(peer_seconds <= std::max(remeasured["peers"][fastest_again]["round_seconds"][0].get<double>(),
                                   remeasured["peers"][fastest_again]["round_seconds"][1].get<double>()));
  const double pick = remeasured["strategies"]["random"]["pick_seconds_at"]["3"].get<double>();
  REQUIRE(remeasured["strategies"]["random"]["vs_fastest_scheduler"]["3"].get<double>() == Approx(peer_seconds / pick));
  REQUIRE(summary["strategies"]["random"]["vs_fastest_scheduler_remeasured"]["3"]["spaces"] == 1);
  REQUIRE_FALSE(summary["strategies"]["Adams2019 sampling"].contains("vs_fastest_scheduler_remeasured"));
  // A second run reuses every run, re-measured config and peer round: nothing is measured again.
  const std::string round_one = read_file(dir + "/out/remeasured/mm_program/peers_round_1.json");
  const auto again = run_experiment(parse_experiment(json, dir + "/live.json"), options);
  REQUIRE(read_file(dir + "/out/remeasured/mm_program/peers_round_1.json") == round_one);
  REQUIRE(again["spaces"][0]["remeasured"]["peers"] == remeasured["peers"]);
  REQUIRE(again["reused_runs"] == summary["runs"]);
  // The machine was checked before the runs' first measurement and the re-measure's, once each;
  // the second sitting measured nothing, so it checked nothing.
  const auto& checks = summary["machine_checks"];
  REQUIRE(checks.size() == 2);
  REQUIRE(checks[0]["phase"] == "runs");
  REQUIRE(checks[1]["phase"] == "remeasure");
  for (const auto& check : checks) {
    REQUIRE(check["fma_flops_one_core"].get<double>() > 1e8);
    REQUIRE(check["fma_flops_threads"].get<double>() > 1e8);
    REQUIRE(check["triad_bandwidth_threads"].get<double>() > 1e7);
  }
  REQUIRE(again["machine_checks"] == checks);
}
