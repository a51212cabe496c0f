// perftune eval through the real binary: its results table alone on stdout.
#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_test_support.h"
#include "experiments/experiment_fixtures.h"
#include "hardware/process/subprocess.h"
#include "surrogate/study/prediction_csv.h"
#include "test_support.h"

namespace perftune {
namespace {

// Two toy GPU caches, GPU B held out, a tiny training run; returns the EVAL.json's path.
std::string write_toy_eval(const std::string& dir) {
  testing::write_toy_cache(dir + "/a.json", "GPU A", 1.0, 3);
  testing::write_toy_cache(dir + "/b.json", "GPU B", 1.3, 4);
  const nlohmann::json config = {{"sources", {dir + "/a.json", dir + "/b.json"}},
                                 {"split", {{"by", "device"}, {"test", {"GPU B"}}}},
                                 {"model", source_path("configs/models/generic_knobs.json")},
                                 {"train", {{"epochs", 2}, {"steps_per_epoch", 3}, {"kernels_per_step", 1}, {"configs_per_kernel", 16}, {"seed", 1}}},
                                 {"models", {"learned", "random"}}};
  std::ofstream(dir + "/eval.json") << config.dump();
  return dir + "/eval.json";
}

TEST_CASE("eval prints its training progress on stderr and only its results on stdout", "[cli][eval]") {
  const std::string dir = scratch_dir("cli_eval_streams");
  const SubprocessResult r = perftune_cli({"eval", write_toy_eval(dir)});
  CAPTURE(r.out, r.err);
  REQUIRE(r.ok());
  CHECK(r.out.find("epoch") == std::string::npos);  // the per-epoch training log is progress
  CHECK(r.err.find("epoch") != std::string::npos);
  CHECK(r.out.find("learned") != std::string::npos);  // the table
}

TEST_CASE("eval --checkpoint scores a trained model instead of training one", "[cli][eval]") {
  const std::string dir = scratch_dir("cli_eval_checkpoint");
  const std::string eval = write_toy_eval(dir);
  const SubprocessResult trained = perftune_cli({"train", eval, "-o", dir + "/model.json"});
  CAPTURE(trained.out, trained.err);
  REQUIRE(trained.ok());

  const SubprocessResult r = perftune_cli({"eval", eval, "--checkpoint", dir + "/model.json", "--json"});
  CAPTURE(r.out, r.err);
  REQUIRE(r.ok());
  CHECK(r.err.find("epoch") == std::string::npos);  // nothing trained
  const nlohmann::json result = nlohmann::json::parse(r.out);
  CHECK(result["folds"][0]["from_checkpoint"] == true);
  CHECK(result["models"]["learned"]["kendall_tau"].is_number());

  const SubprocessResult missing = perftune_cli({"eval", eval, "--checkpoint", dir + "/none.json"});
  CHECK_FALSE(missing.ok());
  CHECK(missing.err.find("none.json") != std::string::npos);

  const SubprocessResult unwritable = perftune_cli({"eval", eval, "--checkpoint", dir + "/model.json", "--predictions", dir + "/no/p.csv"});
  CHECK_FALSE(unwritable.ok());
  CHECK(unwritable.err.find(dir + "/no/p.csv: cannot open") != std::string::npos);
}

// configs/eval/halide_heldout_programs.json in small: trained on three generated programs'
// Halide measurements and their placements' sums, scored on a bundled program's kernels (one of
// them a fused group) and its fusion placements measured on the same backend, with the
// autoschedulers' picks as references. Returns the EVAL.json's path.
std::string write_heldout_sample_eval(const std::string& dir) {
  const nlohmann::json config = {{"sources", {source_path("tests/fixtures/halide_generated_sample.jsonl"),
                                              source_path("tests/fixtures/halide_heldout_sample.jsonl")}},
                                 {"split", {{"by", "device"}, {"test", {"heldout_sample"}}}},
                                 {"model", source_path("configs/models/hybrid.json")},
                                 {"train", {{"epochs", 2}, {"steps_per_epoch", 5}, {"kernels_per_step", 4}, {"configs_per_kernel", 12}, {"seed", 1},
                                            {"program_weight", 1.0}}},
                                 {"models", {"learned", "analytical", "random", "references"}},
                                 {"analytical_device", source_path("configs/hardware/host.json")}};
  std::ofstream(dir + "/eval.json") << config.dump();
  return dir + "/eval.json";
}

TEST_CASE("perftune train trains through the program sums as eval does", "[cli][eval]") {
  // It once dropped the config's program_weight silently (only eval passed the programs on).
  const std::string dir = scratch_dir("cli_train_program_sums");
  const SubprocessResult r = perftune_cli({"train", write_heldout_sample_eval(dir), "-o", dir + "/model.json"});
  CAPTURE(r.out, r.err);
  REQUIRE(r.ok());
  CHECK(r.out.find("training through the sums of 3 programs' placements") != std::string::npos);
  CHECK(std::ifstream(dir + "/model.json").good());
}

TEST_CASE("the held-out real programs study runs end to end on the shipped corpus samples", "[cli][eval]") {
  const std::string dir = scratch_dir("cli_eval_heldout_sample");
  const std::string predictions = dir + "/predictions.csv";
  const SubprocessResult r =
      perftune_cli({"eval", write_heldout_sample_eval(dir), "--json", "--fusion-breakdown", "--predictions", predictions}, 300);
  CAPTURE(r.out, r.err);
  REQUIRE(r.ok());
  CHECK(r.err.find("training through the sums of 3 programs' placements") != std::string::npos);  // as shipped
  const nlohmann::json result = nlohmann::json::parse(r.out);
  std::size_t tile = 0, fusion = 0;
  for (const auto& row : result["kernels"]) {
    tile += row["task"] == "tile";
    fusion += row["task"] == "fusion";
    CHECK(row["models"].contains("Adams2019"));  // each held-out kernel carries its references
  }
  CHECK(tile == 12);
  CHECK(fusion == 1);
  for (const char* model : {"learned", "analytical", "Mullapudi2016"}) CHECK(result["tasks"]["tile"].contains(model));
  CHECK(result["tasks"]["tile"]["learned"]["kendall_tau"].is_number());
  CHECK(result["tasks"]["fusion"]["learned"]["kendall_tau"].is_number());
  CHECK(result.contains("picks_vs_references"));
  // Why each model picks the placement it picks: its first pick and the fastest, kernel by kernel.
  const std::string breakdown = result["fusion_breakdown"];
  for (const char* line : {", learned: first pick ", ", analytical: first pick ", "  first pick {\"fuse.", "  fastest {\"fuse."})
    CHECK(breakdown.find(line) != std::string::npos);

  // --predictions: a row per model, held-out kernel and config, from which each row's scores follow.
  struct Row {
    double measured, predicted;
    std::string task;
  };
  std::map<std::pair<std::string, std::string>, std::vector<Row>> rows;  // (model, kernel) -> its configs
  std::ifstream in(predictions);
  std::string line;
  std::getline(in, line);
  CHECK(line == "model,task,kernel,device,measured_seconds,predicted_seconds,config");
  while (std::getline(in, line)) {
    const std::vector<std::string> fields = split_csv_line(line);
    REQUIRE(fields.size() == 7);
    CHECK(nlohmann::json::parse(fields[6]).is_object());  // the config
    rows[{fields[0], fields[2]}].push_back({std::stod(fields[4]), std::stod(fields[5]), fields[1]});
  }
  CHECK(rows.size() == 2 * 13);  // learned and analytical on every row; random and the references predict nothing
  for (const auto& row : result["kernels"])
    for (const char* model : {"learned", "analytical"}) {
      const std::vector<Row>& configs = rows[{model, row["kernel"]}];
      REQUIRE(configs.size() == row["configs"].get<std::size_t>());
      CHECK(configs.front().task == row["task"]);
      const auto pick = std::min_element(configs.begin(), configs.end(), [](const Row& a, const Row& b) { return a.predicted < b.predicted; });
      const auto best = std::min_element(configs.begin(), configs.end(), [](const Row& a, const Row& b) { return a.measured < b.measured; });
      CHECK(pick->measured / best->measured - 1 == Approx(row["models"][model]["top1_slowdown"].get<double>()));
    }
}

TEST_CASE("perftune eval --seeds trains once per seed and reports the means and their spread", "[cli][eval]") {
  const std::string dir = scratch_dir("cli_eval_seeds");
  const std::string config = write_heldout_sample_eval(dir);
  const SubprocessResult r = perftune_cli({"eval", config, "--seeds", "2", "--json"}, 300);
  CAPTURE(r.out, r.err);
  REQUIRE(r.ok());
  CHECK(r.err.find("[eval] training seed 2 (2 of 2)") != std::string::npos);
  const nlohmann::json result = nlohmann::json::parse(r.out);
  CHECK(result["seeds"] == nlohmann::json({1, 2}));
  REQUIRE(result["per_seed"].size() == 2);
  // Read on the MAPE: two models trained this briefly may rank the sample alike (tau tied), but
  // another seed is another model, with other predictions.
  const double mape1 = result["per_seed"][0]["tasks"]["tile"]["learned"]["mape"];
  const double mape2 = result["per_seed"][1]["tasks"]["tile"]["learned"]["mape"];
  CHECK(mape1 != mape2);
  CHECK(result["tasks"]["tile"]["learned"]["mape"].get<double>() == Approx((mape1 + mape2) / 2));
  CHECK(result["spread"]["tile"]["learned"]["mape"].get<double>() == Approx(std::abs(mape1 - mape2) / std::sqrt(2.0)));
  CHECK(result["spread"]["tile"]["analytical"]["mape"].get<double>() == Approx(0.0));  // no seed moves it
  CHECK(result["kernels"].size() == 13);  // per-kernel means, the rows of one run

  // One trained model has no seeds to vary.
  const SubprocessResult refused = perftune_cli({"eval", config, "--seeds", "2", "--checkpoint", config});
  CHECK_FALSE(refused.ok());
  CHECK(refused.err.find("--seeds trains the learned model once per seed") != std::string::npos);
  const SubprocessResult no_breakdown = perftune_cli({"eval", config, "--seeds", "2", "--fusion-breakdown"});
  CHECK_FALSE(no_breakdown.ok());
  CHECK(no_breakdown.err.find("--fusion-breakdown shows one trained model's picks") != std::string::npos);
  const SubprocessResult no_predictions = perftune_cli({"eval", config, "--seeds", "2", "--predictions", dir + "/p.csv"});
  CHECK_FALSE(no_predictions.ok());
  CHECK(no_predictions.err.find("--predictions writes one trained model's predictions") != std::string::npos);
}


TEST_CASE("eval scores trees with the Halide loop nest of every config, lowered by the workers", "[cli][eval]") {
  const std::string dir = scratch_dir("cli_eval_loop_nest");
  nlohmann::json config = nlohmann::json::parse(std::ifstream(write_heldout_sample_eval(dir)));
  config["models"] = {"trees", "random"};
  config["trees"] = {{"rounds", 10}, {"max_depth", 3}, {"min_opcode_count", 1}, {"schedule_features", "halide_loop_nest"},
                     {"max_configs_per_kernel", 4}};
  std::ofstream(dir + "/loop_nest.json") << config.dump();
  const SubprocessResult r = perftune_cli({"eval", dir + "/loop_nest.json", "--json"}, 300);
  CAPTURE(r.out, r.err);
  REQUIRE(r.ok());  // and the workers end with perftune
  const nlohmann::json result = nlohmann::json::parse(r.out);
  CHECK(result["tasks"]["tile"]["trees"]["kendall_tau"].is_number());

  config["trees"]["schedule_features"] = "no_such_features";
  std::ofstream(dir + "/unknown.json") << config.dump();
  const SubprocessResult unknown = perftune_cli({"eval", dir + "/unknown.json"});
  CHECK_FALSE(unknown.ok());
  CHECK(unknown.err.find("\"no_such_features\" are not provided by this program (provided: halide_loop_nest)") != std::string::npos);
}

TEST_CASE("train with \"learner\": \"trees\" writes a tree checkpoint that eval --checkpoint scores", "[cli][eval]") {
  const std::string dir = scratch_dir("cli_eval_trees");
  const std::string eval = write_toy_eval(dir);
  nlohmann::json config = nlohmann::json::parse(std::ifstream(eval));
  config["learner"] = "trees";
  config["trees"] = {{"rounds", 10}, {"max_depth", 3}, {"min_opcode_count", 1}};
  std::ofstream(dir + "/trees.json") << config.dump();
  const SubprocessResult trained = perftune_cli({"train", dir + "/trees.json", "-o", dir + "/model.json", "--json"});
  CAPTURE(trained.out, trained.err);
  REQUIRE(trained.ok());
  CHECK(nlohmann::json::parse(trained.out)["training"]["rows"].get<int>() > 0);
  CHECK(std::ifstream(dir + "/model.ubj").good());

  const SubprocessResult r = perftune_cli({"eval", eval, "--checkpoint", dir + "/model.json", "--json"});
  CAPTURE(r.out, r.err);
  REQUIRE(r.ok());
  const nlohmann::json result = nlohmann::json::parse(r.out);
  CHECK(result["models"]["learned"]["kendall_tau"].is_number());
  CHECK(result["models"]["learned"]["mape"].is_null());  // a ranking: no seconds to compare

  config["learner"] = "forest";
  std::ofstream(dir + "/bad.json") << config.dump();
  const SubprocessResult bad = perftune_cli({"train", dir + "/bad.json", "-o", dir + "/bad_model.json"});
  CHECK_FALSE(bad.ok());
  CHECK(bad.err.find("$.learner") != std::string::npos);
}

}  // namespace
}  // namespace perftune
