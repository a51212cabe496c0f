#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <random>
#include <sstream>

#include "experiments/experiment.h"
#include "experiments/experiment_runner.h"
#include "autotuner/factories/model_factory.h"
#include "experiments/pretraining/pretraining.h"
#include "ir/input_error.h"
#include "ir/json_view.h"
#include "test_support.h"

using namespace perftune;
namespace fs = std::filesystem;

namespace {

// A recorded 8x8 space of kernel `kernel` on `device` in Kernel Tuner's cache format. Every device
// shares the landscape's shape (best near bx=16, by=4) with its own scale and noise, as GPUs of one
// kernel do, so a model trained on the others has something to transfer.
void write_cache(const std::string& path, const std::string& kernel, const std::string& device, double scale,
                 unsigned seed) {
  const std::vector<int> values = {1, 2, 4, 8, 16, 32, 64, 128};
  nlohmann::json cache = {{"device_name", device},
                          {"kernel_name", kernel},
                          {"problem_size", {64, 64}},
                          {"tune_params_keys", {"bx", "by"}},
                          {"tune_params", {{"bx", values}, {"by", values}}}};
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> noise(0.95, 1.05);
  for (int bx : values)
    for (int by : values)
      cache["cache"][std::to_string(bx) + "," + std::to_string(by)] = {
          {"bx", bx}, {"by", by}, {"compile_time", 50.0}, {"benchmark_time", 10.0},
          {"time", scale * (1.0 + std::abs(std::log2(bx) - 4) + std::abs(std::log2(by) - 2)) * noise(rng)}};
  std::ofstream(path) << cache.dump();
}

// Three GPUs of kernel "toy"; a small GNN and a few training steps keep the test fast.
nlohmann::json pretrain_experiment(const std::string& dir) {
  write_cache(dir + "/toy_a.json", "toy", "GPU A", 1.0, 1);
  write_cache(dir + "/toy_b.json", "toy", "GPU B", 2.0, 2);
  write_cache(dir + "/toy_c.json", "toy", "GPU C", 0.5, 3);
  std::ofstream(dir + "/tiny_model.json") << R"({"opcode_embedding": 4, "hidden": 16, "layers": 1, "head_layers": 1})";
  const nlohmann::json pretrain = {
      {"type", "learned"},
      {"pretrain",
       {{"params", "tiny_model.json"},
        {"train", {{"epochs", 2}, {"steps_per_epoch", 5}, {"kernels_per_step", 2}, {"configs_per_kernel", 16},
                   {"patience", 2}, {"seed", 1}}},
        {"on", "other_devices"}}}};
  nlohmann::json spaces = nlohmann::json::array();
  for (const char* name : {"a", "b", "c"})
    spaces.push_back({{"name", std::string("toy/") + name}, {"source", {{"path", std::string("toy_") + name + ".json"}}}});
  return {{"name", "pretrain"},
          {"spaces", spaces},
          {"strategies", {{{"name", "random"}, {"strategy", {{"type", "random"}}}},
                          {{"name", "SA pre-trained"}, {"strategy", {{"type", "annealing"}, {"chains", 8}, {"steps", 20}}},
                           {"model", pretrain}},
                          {{"name", "evolution pre-trained"},
                           {"strategy", {{"type", "evolution"}, {"population", 32}, {"generations", 2}}},
                           {"model", pretrain}}}},
          {"backend", {{"type", "replay"}}},
          {"budget", {{"measurements", 8}}},
          {"top_k", 4},
          {"seeds", 2},
          {"report_budgets", {4, 8}},
          {"output", "out"}};
}

ExperimentOptions quiet_options() {
  ExperimentOptions options;
  options.jobs = 2;
  options.plots = false;
  return options;
}

std::string file_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

TEST_CASE("pre-training sources: the same kernel on other devices, never the held-out space") {
  const std::vector<SpaceIdentity> spaces = {
      {"Xgemm", "TITAN RTX"}, {"Xgemm", "RTX 2080 Ti"}, {"conv", "TITAN RTX"}, {"Xgemm", "RTX 3060"}, {"Xgemm", "TITAN RTX"}};
  const auto [held_out, expected] = GENERATE(table<std::size_t, std::vector<std::size_t>>({
      {0, {1, 3}},     // the other GPUs of Xgemm; neither conv nor another TITAN RTX space
      {1, {0, 3, 4}},  // every Xgemm space measured elsewhere, in experiment order
      {2, {}},         // conv has no other device
      {4, {1, 3}},     // a second space on the held-out device is not "another device"
  }));
  CAPTURE(held_out);
  REQUIRE(pretraining_sources(spaces, held_out) == expected);
}

TEST_CASE("pre-training sources leave out a space named a target only") {
  const std::vector<SpaceIdentity> spaces = {{"Xgemm", "A", true}, {"Xgemm", "B", true}, {"Xgemm", "D", false}, {"Xgemm", "E", false}};
  REQUIRE(pretraining_sources(spaces, 0) == std::vector<std::size_t>{1});
  REQUIRE(pretraining_sources(spaces, 2) == std::vector<std::size_t>{0, 1});  // not E, the other target
}

TEST_CASE("an experiment pre-trains one model per held-out space on the other devices and reuses it on restart") {
  const std::string dir = scratch_dir("experiment_pretraining");
  // A relative experiment path, as on the command line: its output and checkpoints are relative too.
  const std::string file = fs::relative(dir + "/pretrain.json").string();
  const Experiment experiment = parse_experiment(pretrain_experiment(dir), file);
  REQUIRE(experiment.strategies[1].pretrain);
  REQUIRE(experiment.strategies[1].pretrain->identity_hash() == experiment.strategies[2].pretrain->identity_hash());

  const auto summary = run_experiment(experiment, quiet_options());
  const auto& models = summary["pretraining"];
  REQUIRE(models.size() == 3);  // one per space, shared by both pre-trained strategies
  std::map<std::string, std::string> checkpoint_text;
  std::map<std::string, nlohmann::ordered_json> training_of;
  for (const auto& model : models) {
    const std::string space = model["space"];
    CAPTURE(space);
    const auto sources = model["sources"].get<std::vector<std::string>>();
    REQUIRE(sources.size() == 2);
    REQUIRE(std::find(sources.begin(), sources.end(), space) == sources.end());
    REQUIRE(model["reused"] == false);
    REQUIRE(model["training"]["epochs"].get<int>() >= 1);
    const std::string checkpoint = model["checkpoint"];
    REQUIRE(fs::equivalent(checkpoint, pretrained_checkpoint_path(dir + "/out", space, *experiment.strategies[1].pretrain)));
    REQUIRE(fs::exists(fs::path(checkpoint).replace_extension(".pt")));
    const nlohmann::json saved = parse_json_file(checkpoint);
    REQUIRE(saved["extra"]["held_out"] == space);
    REQUIRE(saved["extra"]["sources"] == nlohmann::json(sources));
    checkpoint_text[checkpoint] = file_text(checkpoint);
    training_of[space] = model["training"];
  }
  REQUIRE(models[0]["sources"] == nlohmann::json({"toy/b", "toy/c"}));
  REQUIRE(!fs::exists(dir + "/out/models/toy/.a." + experiment.strategies[1].pretrain->identity_hash() + ".partial"));
  // Every pre-trained run loaded its space's checkpoint and completed its budget.
  for (const char* name : {"SA pre-trained", "evolution pre-trained"}) {
    CAPTURE(name);
    REQUIRE(summary["strategies"][name]["score"].is_number());
  }

  // A restart (the runs' folders removed too, so they run again) loads the same files, untouched.
  fs::remove_all(dir + "/out/runs");
  const auto again = run_experiment(experiment, quiet_options());
  REQUIRE(again["reused_runs"] == 0);
  for (const auto& model : again["pretraining"]) {
    CAPTURE(model["space"]);
    REQUIRE(model["reused"] == true);
    // The report saved with it (read back from JSON, so compared without key order).
    REQUIRE(nlohmann::json::parse(model["training"].dump()) == nlohmann::json::parse(training_of.at(model["space"]).dump()));
    REQUIRE(file_text(model["checkpoint"]) == checkpoint_text.at(model["checkpoint"]));
  }
  // Same models, same seeds: the same runs. The time-axis scores count the strategies' own wall
  // time, measured anew by runs that ran again, so they are left out of the comparison.
  auto without_time = [](nlohmann::ordered_json strategies) {
    for (auto& [name, row] : strategies.items()) {
      row.erase("time_score");
      row.erase("time_score_standard_error");
    }
    return strategies;
  };
  REQUIRE(without_time(again["strategies"]) == without_time(summary["strategies"]));
}

TEST_CASE("a model pre-trained on a corpus of record logs serves every space, and is reused on restart") {
  // The generated Halide corpus's role: programs no space holds. Here two other GPUs' records
  // stand in for it, and toy/a is the only space.
  const std::string dir = scratch_dir("experiment_pretraining_corpus");
  nlohmann::json json = pretrain_experiment(dir);
  json["spaces"] = nlohmann::json::array({{{"name", "toy/a"}, {"source", {{"path", "toy_a.json"}}}}});
  for (const int s : {1, 2}) {
    json["strategies"][s]["model"]["pretrain"]["on"] = "corpus";
    json["strategies"][s]["model"]["pretrain"]["corpus"] = {"toy_b.json", "toy_c.json"};
  }
  const Experiment experiment = parse_experiment(json, dir + "/pretrain.json");
  const auto summary = run_experiment(experiment, quiet_options());
  const auto& models = summary["pretraining"];
  REQUIRE(models.size() == 1);  // one model, shared by both strategies
  REQUIRE(models[0]["sources"] == nlohmann::json({"toy_b.json", "toy_c.json"}));
  REQUIRE(models[0]["reused"] == false);
  const std::string checkpoint = models[0]["checkpoint"];
  REQUIRE(fs::path(checkpoint).filename().string().rfind("corpus.", 0) == 0);
  const nlohmann::json saved = parse_json_file(checkpoint);
  CHECK_FALSE(saved["extra"].contains("held_out"));
  CHECK(saved["extra"]["pretrain"]["corpus"] == nlohmann::json({"toy_b.json", "toy_c.json"}));
  CHECK(fs::equivalent(experiment_campaign(experiment, 0, 1, 1, dir + "/run").model.checkpoint, checkpoint));
  for (const char* name : {"SA pre-trained", "evolution pre-trained"}) REQUIRE(summary["strategies"][name]["score"].is_number());

  fs::remove_all(dir + "/out/runs");
  const auto again = run_experiment(experiment, quiet_options());
  REQUIRE(again["pretraining"][0]["reused"] == true);

  // A corpus that is not there is named by its place in the experiment.
  json["strategies"][1]["model"]["pretrain"]["corpus"] = {"missing.jsonl"};
  json["output"] = "out_missing";
  try {
    run_experiment(parse_experiment(json, dir + "/pretrain.json"), quiet_options());
    FAIL("accepted");
  } catch (const InputError& error) {
    CAPTURE(error.what());
    REQUIRE(error.place() == "$.strategies[1].model.pretrain.corpus[0]");
  }
}

TEST_CASE("a pretrain section's residual reaches every run's model, and the checkpoint does not depend on it") {
  const std::string dir = scratch_dir("experiment_pretraining_residual");
  nlohmann::json json = pretrain_experiment(dir);
  const Experiment plain = parse_experiment(json, dir + "/pretrain.json");
  json["strategies"][1]["model"]["residual"] = {{"fine_tune_prior", true}};
  const Experiment experiment = parse_experiment(json, dir + "/pretrain.json");
  REQUIRE(experiment.strategies[1].pretrain->identity_hash() == plain.strategies[1].pretrain->identity_hash());
  const Campaign with = experiment_campaign(experiment, 0, 1, 1, dir + "/run");
  CHECK(with.model.type == "learned");
  CHECK(with.model.residual);
  CHECK(with.model.residual_options.model.fine_tune_prior);
  CHECK(fs::path(with.model.checkpoint).filename() == fs::path(pretrained_checkpoint_path("out", "toy/a", *plain.strategies[1].pretrain)).filename());
  CHECK_FALSE(experiment_campaign(experiment, 0, 2, 1, dir + "/run").model.residual);

  json["strategies"][1]["model"]["residual"] = {{"fine_tune", true}};
  try {
    parse_experiment(json, dir + "/pretrain.json");
    FAIL("accepted");
  } catch (const InputError& error) {
    CAPTURE(error.what());
    REQUIRE(error.place() == "$.strategies[1].model.residual.fine_tune");
  }
}

TEST_CASE("per-source pre-training: one model per source space trained on it alone, each run combining its sources") {
  const std::string dir = scratch_dir("experiment_pretraining_per_source");
  nlohmann::json json = pretrain_experiment(dir);
  json["strategies"].erase(2);
  const Experiment pooled = parse_experiment(json, dir + "/pretrain.json");
  json["strategies"][1]["model"]["pretrain"]["per_source"] = true;
  json["strategies"][1]["model"]["residual"] = {{"exploration", 1.0}};
  const Experiment experiment = parse_experiment(json, dir + "/pretrain.json");
  const PretrainSpec& spec = *experiment.strategies[1].pretrain;
  REQUIRE(spec.per_source);
  // Its own checkpoints: the identity names the option; a pooled section's identity is as before it.
  CHECK(spec.identity()["per_source"] == true);
  CHECK_FALSE(pooled.strategies[1].pretrain->identity().contains("per_source"));
  CHECK(spec.identity_hash() != pooled.strategies[1].pretrain->identity_hash());

  const auto summary = run_experiment(experiment, quiet_options());
  const auto& models = summary["pretraining"];
  REQUIRE(models.size() == 3);  // one per device, each serving the two other held-out spaces
  for (const auto& model : models) {
    const std::string space = model["space"];
    CAPTURE(space);
    REQUIRE(model["per_source"] == true);
    REQUIRE(model["sources"] == nlohmann::json({space}));
    REQUIRE(model["reused"] == false);
    const std::string checkpoint = model["checkpoint"];
    REQUIRE(fs::equivalent(checkpoint, pretrained_checkpoint_path(dir + "/out", space, spec)));
    const nlohmann::json saved = parse_json_file(checkpoint);
    REQUIRE(saved["extra"]["sources"] == nlohmann::json({space}));
    REQUIRE_FALSE(saved["extra"].contains("held_out"));  // it serves several
  }
  REQUIRE(summary["strategies"]["SA pre-trained"]["score"].is_number());

  // toy/a's runs combine the models of toy/b and toy/c (never its own) as priors of one residual.
  const std::vector<std::string> sources = {"toy/b", "toy/c"};
  const Campaign run = experiment_campaign(experiment, 0, 1, 1, dir + "/run", &sources);
  REQUIRE(run.model.checkpoints.size() == 2);
  CHECK(run.model.checkpoint.empty());
  CHECK(run.model.residual);
  CHECK(run.model.residual_options.model.exploration == 1.0);
  for (std::size_t i = 0; i < 2; ++i)
    CHECK(fs::equivalent(run.model.checkpoints[i], pretrained_checkpoint_path(dir + "/out", sources[i], spec)));
  CHECK(make_model(run.model)->name().find("}+residual") != std::string::npos);  // both loaded

  // A restart reuses all three.
  fs::remove_all(dir + "/out/runs");
  // The summary is held by name: a range-for over a member of the returned temporary would iterate freed memory.
  const auto restarted = run_experiment(experiment, quiet_options());
  REQUIRE(restarted["pretraining"].size() == 3);
  for (const auto& model : restarted["pretraining"]) REQUIRE(model["reused"] == true);
}

TEST_CASE("a recorded reference reads the other devices' recordings of each space's kernel") {
  const std::string dir = scratch_dir("experiment_recorded_reference");
  nlohmann::json json = pretrain_experiment(dir);
  json["strategies"].erase(2);
  json["strategies"][1]["model"] = {{"type", "recorded"}, {"sources", "other_devices"}, {"residual", {{"exploration", 1.0}}}};
  const Experiment experiment = parse_experiment(json, dir + "/pretrain.json");
  REQUIRE(experiment.strategies[1].models_name_sources());
  const auto summary = run_experiment(experiment, quiet_options());
  CHECK_FALSE(summary.contains("pretraining"));  // nothing is trained
  REQUIRE(summary["strategies"]["SA pre-trained"]["score"].is_number());
  const std::vector<std::string> sources = {"toy/b", "toy/c"};
  const Campaign run = experiment_campaign(experiment, 0, 1, 1, dir + "/run", &sources);
  REQUIRE(run.model.recordings.size() == 2);
  CHECK(fs::equivalent(run.model.recordings[0], dir + "/toy_b.json"));
  CHECK(fs::equivalent(run.model.recordings[1], dir + "/toy_c.json"));
  CHECK(make_model(run.model)->name() == "{recorded:GPU B,recorded:GPU C}+residual");

  json["strategies"][1]["model"]["sources"] = "all";
  try {
    parse_experiment(json, dir + "/pretrain.json");
    FAIL("accepted");
  } catch (const InputError& error) {
    CAPTURE(error.what());
    REQUIRE(error.place() == "$.strategies[1].model.sources");
  }
}

TEST_CASE("a pre-trained model on disk that another set of spaces trained is not silently reused") {
  const std::string dir = scratch_dir("experiment_pretraining_changed");
  nlohmann::json json = pretrain_experiment(dir);
  json["strategies"].erase(2);
  run_experiment(parse_experiment(json, dir + "/pretrain.json"), quiet_options());
  json["spaces"].erase(2);  // toy/c gone: toy/a's model would now train on toy/b alone
  try {
    run_experiment(parse_experiment(json, dir + "/pretrain.json"), quiet_options());
    FAIL("reused a model trained on other sources");
  } catch (const InputError& error) {
    CAPTURE(error.what());
    REQUIRE(error.file().find("models/toy/a.") != std::string::npos);
    REQUIRE(error.place() == "$.extra");
  }
}

TEST_CASE("an invalid pretrain section is rejected with its JSON path") {
  const std::string dir = scratch_dir("experiment_pretraining_errors");
  const auto [place, edit] = GENERATE(table<std::string, std::function<void(nlohmann::json&)>>({
      {"$.strategies[1].model.pretrain.epochz",
       [](nlohmann::json& j) { j["strategies"][1]["model"]["pretrain"]["epochz"] = 3; }},
      {"$.strategies[1].model.pretrain.on", [](nlohmann::json& j) { j["strategies"][1]["model"]["pretrain"]["on"] = "all"; }},
      {"$.strategies[1].model.type", [](nlohmann::json& j) { j["strategies"][1]["model"]["type"] = "analytical"; }},
      {"$.strategies[1].model.checkpoint", [](nlohmann::json& j) { j["strategies"][1]["model"]["checkpoint"] = "m.json"; }},
      {"$.strategies[1].model.pretrain.train.epochs",
       [](nlohmann::json& j) { j["strategies"][1]["model"]["pretrain"]["train"]["epochs"] = 0; }},
      {"$.strategies[1].model.pretrain.per_source",
       [](nlohmann::json& j) { j["strategies"][1]["model"]["pretrain"]["per_source"] = "yes"; }},
      {"$.strategies[1].model.pretrain.corpus",  // a corpus with another rule
       [](nlohmann::json& j) { j["strategies"][1]["model"]["pretrain"]["corpus"] = {"c.jsonl"}; }},
      {"$.strategies[1].model.pretrain",  // "corpus" without its record logs
       [](nlohmann::json& j) { j["strategies"][1]["model"]["pretrain"]["on"] = "corpus"; }},
      {"$.strategies[1].model.pretrain.per_source",  // nothing would combine the source models
       [](nlohmann::json& j) { j["strategies"][1]["model"]["pretrain"]["per_source"] = true; }},
      {"$.strategies[1].model.pretrain.train.program_weight",  // would be silently ignored
       [](nlohmann::json& j) { j["strategies"][1]["model"]["pretrain"]["train"]["program_weight"] = 1.0; }},
  }));
  nlohmann::json json = pretrain_experiment(dir);
  edit(json);
  CAPTURE(place);
  try {
    parse_experiment(json, dir + "/pretrain.json");
    FAIL("accepted");
  } catch (const InputError& error) {
    CAPTURE(error.what());
    REQUIRE(error.file() == dir + "/pretrain.json");
    REQUIRE(error.place() == place);
  }
}

TEST_CASE("a pretrain section with no other device of a space's kernel is rejected before any run") {
  const std::string dir = scratch_dir("experiment_pretraining_alone");
  nlohmann::json json = pretrain_experiment(dir);
  write_cache(dir + "/lonely.json", "lonely", "GPU A", 1.0, 4);
  json["spaces"].push_back({{"name", "lonely/a"}, {"source", {{"path", "lonely.json"}}}});
  const Experiment experiment = parse_experiment(json, dir + "/pretrain.json");
  try {
    run_experiment(experiment, quiet_options());
    FAIL("accepted");
  } catch (const InputError& error) {
    CAPTURE(error.what());
    REQUIRE(error.place() == "$.strategies[1].model.pretrain");
    REQUIRE(std::string(error.what()).find("lonely/a") != std::string::npos);
  }
  REQUIRE(!fs::exists(dir + "/out/runs"));
}
