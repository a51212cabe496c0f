#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "experiments/model_study/model_study.h"
#include "experiments/model_study/model_study_plots.h"
#include "ir/input_error.h"
#include "test_support.h"
#include "experiment_fixtures.h"

using namespace perftune;
using perftune::testing::line_count;
using perftune::testing::write_toy_cache;
namespace fs = std::filesystem;

namespace {

// An eval config over the two toy devices, the slower one held out; a small, quick model.
void write_eval(const std::string& path, const std::string& sources) {
  std::ofstream(path) << R"({"sources": )" << sources << R"(, "split": {"by": "device", "test": ["Toy GPU B"]},
    "model": {"hidden": 16, "opcode_embedding": 8, "layers": 1, "min_opcode_count": 1},
    "train": {"epochs": 3, "steps_per_epoch": 8, "configs_per_kernel": 16, "seed": 1},
    "models": ["learned", "default", "random"]})";
}

// A study folder with a runnable eval config (toy) and one whose source is absent (absent).
std::string write_study(const std::string& dir) {
  write_toy_cache(dir + "/toy_a.json", "Toy GPU A", 1.0, 3);
  write_toy_cache(dir + "/toy_b.json", "Toy GPU B", 1.5, 4);
  write_eval(dir + "/toy.json", R"(["toy_a.json", "toy_b.json"])");
  write_eval(dir + "/absent.json", R"(["toy_a.json", "not_collected_yet.jsonl"])");
  return dir;
}

}  // namespace

TEST_CASE("a model study runs its eval configs, writes one summary, predictions and PNG/SVG plots") {
  const std::string dir = write_study(scratch_dir("model_study_end_to_end"));
  const ModelStudy study = parse_model_study({{"name", "toy_study"}, {"studies", {"toy.json", "absent.json"}}}, dir + "/study.json");
  REQUIRE(study.output == (fs::path(dir) / "../../runs/toy_study").lexically_normal().string());  // the default
  ModelStudyOptions options;
  options.output = dir + "/out";
  std::ostringstream progress;
  options.progress = &progress;
  const auto summary = run_model_study(study, options);

  REQUIRE(summary["kind"] == "model_study");
  REQUIRE(summary["studies"].size() == 1);
  const auto& toy = summary["studies"][0];
  REQUIRE(toy["name"] == "toy");
  REQUIRE(toy["kernels"].size() == 1);  // the held-out device's one kernel
  REQUIRE(toy["kernels"][0]["device"] == "Toy GPU B");
  REQUIRE(toy["models"]["learned"]["kendall_tau"].is_number());
  REQUIRE(toy["models"]["random"]["kendall_tau"] == 0.0);
  // One prediction per successful config of the held-out kernel (64 recorded, 4 failed), plus the header.
  REQUIRE(toy["predicted_points"]["learned"] == 60);
  REQUIRE(line_count(dir + "/out/predictions/toy.csv") == 1 + 60);

  // The absent source is reported, by name and with the file it looked for, not silently dropped.
  REQUIRE(summary["skipped"].size() == 1);
  REQUIRE(summary["skipped"][0]["name"] == "absent");
  REQUIRE_THAT(summary["skipped"][0]["reason"].get<std::string>(), Catch::Contains("$.sources[1]"));
  REQUIRE_THAT(progress.str(), Catch::Contains("absent: SKIPPED"));
  std::ifstream tables(dir + "/out/tables.md");
  const std::string markdown((std::istreambuf_iterator<char>(tables)), std::istreambuf_iterator<char>());
  REQUIRE_THAT(markdown, Catch::Contains("### toy") && Catch::Contains("Skipped absent"));

  REQUIRE(is_model_study_results(dir + "/out"));
  for (const char* image : {"scatter_toy", "tau_toy"})
    for (const char* ext : {".png", ".svg"}) {
      const fs::path path = fs::path(dir) / "out/plots" / (std::string(image) + ext);
      CAPTURE(path);
      REQUIRE(fs::exists(path));
      REQUIRE(fs::file_size(path) > 1000);
    }

  // A rerun reuses the finished study instead of training again; the plots re-render from disk.
  std::ostringstream again_progress;
  options.progress = &again_progress;
  const auto again = run_model_study(study, options);
  REQUIRE_THAT(again_progress.str(), Catch::Contains("toy: reused"));
  REQUIRE(again["studies"][0]["models"] == toy["models"]);
  REQUIRE(render_model_study_plots(dir + "/out").size() == 4);
}

TEST_CASE("a model study's mistakes name their place, and only an absent source is skipped") {
  const std::string dir = write_study(scratch_dir("model_study_errors"));
  SECTION("the study file") {
    const auto [place, json] = GENERATE(table<std::string, nlohmann::json>({
        {"$.studies", {{"studies", nlohmann::json::array()}}},
        {"$.studies[0]", {{"studies", {"no_such_eval.json"}}}},
        {"$.studies[1]", {{"studies", {"toy.json", "toy.json"}}}},
        {"$.spaces", {{"studies", {"toy.json"}}, {"spaces", nlohmann::json::array()}}},
    }));
    CAPTURE(place);
    try {
      parse_model_study(json, dir + "/study.json");
      FAIL("accepted");
    } catch (const InputError& error) {
      REQUIRE(error.file() == dir + "/study.json");
      REQUIRE(error.place() == place);
    }
  }
  SECTION("an eval config that is wrong, not merely waiting for its data, stops the study") {
    std::ofstream(dir + "/broken.json") << R"({"sources": [42], "split": {"by": "device", "test": ["Toy GPU B"]}})";
    const ModelStudy study = parse_model_study({{"studies", {"broken.json"}}}, dir + "/study.json");
    ModelStudyOptions options;
    options.output = dir + "/out";
    options.plots = false;
    REQUIRE_THROWS_WITH(run_model_study(study, options), Catch::Contains("broken.json") && Catch::Contains("$.sources[0]"));
  }
}
