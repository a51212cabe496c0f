#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <set>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "ir/fusion.h"
#include "ir/input_error.h"
#include "ir/knob_roles.h"
#include "ir/program_json.h"
#include "ir/record_log.h"
#include "surrogate/study/study_runner.h"
#include "synthetic_kernels.h"
#include "test_support.h"

using namespace perftune;

namespace {

// A record log of synthetic kernels from two "programs" on two devices (the second 1.5x slower).
std::string write_log(const std::string& dir) {
  const std::string path = dir + "/corpus.jsonl";
  RecordLog log(path);
  const auto corpus = testing::synthetic_corpus(8, 77);
  for (std::size_t i = 0; i < corpus.size(); ++i) {
    const MeasuredKernel& k = corpus[i];
    const Kernel kernel((i % 2 ? "prog_b/" : "prog_a/") + k.kernel.name(), k.kernel.body());
    log.define_kernel(kernel, *k.space);
    for (const std::string device : {"cpu-fast", "cpu-slow"})
      for (const Measurement& m : k.measurements) {
        Record r{device, kernel.key(), kernel.name(), k.space->knob_names(), m.config, m.result, 0.0};
        if (r.result.ok() && device == "cpu-slow") r.result = MeasureResult::from_repeats({m.result.seconds * 1.5}, 0.0);
        log.append(r);
      }
  }
  return path;
}

std::string write_config(const std::string& dir, const std::string& split) {
  const std::string path = dir + "/eval.json";
  std::ofstream(path) << R"({"sources": ["corpus.jsonl"], "split": )" << split
                      << R"(, "model": {"hidden": 16, "opcode_embedding": 8, "layers": 2, "min_opcode_count": 1},
                           "train": {"epochs": 4, "steps_per_epoch": 10, "configs_per_kernel": 12}})";
  return path;
}

// A CPU-corpus-like record log: mlp_block_small and a 3-op chain, each measured under fusion
// configs, and every kernel of its unfused partition under two tile configs.
std::string write_program_log(const std::string& dir) {
  const std::string path = dir + "/cpu.jsonl";
  RecordLog log(path);
  Program chain = testing::small_kernel("chain", 128, 64, 32).body();
  chain.set_name("chain");
  for (const Program& program : {load_program_file(source_path("configs/programs/mlp_block_small.json")), chain}) {
    const MeasuredKernel whole = testing::fusion_measurements(program);
    log.define_kernel(whole.kernel, *whole.space);
    for (const Measurement& m : whole.measurements)
      log.append(Record{"cpu", whole.kernel.key(), whole.kernel.name(), whole.space->knob_names(), m.config, m.result, 0.0});
    // Every kernel of the unfused partition, under two tile configs.
    for (const FusedKernel& fused : partition(program, FusionConfig::none(program)).kernels) {
      const auto dims = fused.kernel.body().op(fused.kernel.body().root()).shape.dims;
      if (dims.empty()) continue;
      const SearchSpace space({{tile_out_knob(0), {std::max<std::int64_t>(1, dims[0] / 2), dims[0]}}});
      log.define_kernel(fused.kernel, space);
      for (std::int64_t t : space.knobs()[0].values)
        log.append(Record{"cpu", fused.kernel.key(), fused.kernel.name(), space.knob_names(), Config{{t}},
                          MeasureResult::from_repeats({1e-6 * double(dims[0] + 64 / t)}, 0.0), 0.0});
    }
  }
  return path;
}

}  // namespace

TEST_CASE("splits never put one kernel on both sides") {
  const std::string dir = scratch_dir("study_split");
  write_log(dir);
  struct Row { const char* split; std::size_t folds, test; };
  const auto row = GENERATE(Row{R"({"by": "device", "test": ["CPU slow"]})", 1, 8},
                            Row{R"({"by": "kernel", "test_fraction": 0.25, "seed": 3})", 1, 4},
                            Row{R"({"by": "program", "test_fraction": 0.5})", 1, 8},
                            Row{R"({"by": "leave_one_out"})", 8, 2});
  CAPTURE(row.split);
  const StudyConfig config = StudyConfig::load(write_config(dir, row.split));
  const LoadedSources sources = load_sources(config);
  REQUIRE(sources.kernels.size() == 16);
  const auto folds = make_folds(sources.kernels, config.split, config.file);
  REQUIRE(folds.size() == row.folds);
  for (const Fold& fold : folds) {
    REQUIRE(fold.test.size() == row.test);
    for (const MeasuredKernel* test : fold.test)
      for (const MeasuredKernel* train : fold.train) {
        if (config.split.by == "device") REQUIRE(test->device != train->device);
        else if (config.split.by == "program") REQUIRE(program_of(*test) != program_of(*train));
        else REQUIRE(test->kernel.key() != train->kernel.key());
      }
  }
}

TEST_CASE("evaluation scores the learned model and the baselines on held-out kernels") {
  const std::string dir = scratch_dir("study_eval");
  write_log(dir);
  const StudyConfig config = StudyConfig::load(write_config(dir, R"({"by": "kernel", "test_fraction": 0.25})"));
  const StudyResult result = run_evaluation(config, load_sources(config), nullptr);
  REQUIRE(result.table.rows.size() == 4);
  const auto averages = result.table.averages();
  REQUIRE(averages.at("random").kendall_tau == 0.0);
  REQUIRE(averages.at("random").top1_slowdown > averages.at("random").top10_slowdown);
  REQUIRE(std::isnan(averages.at("default").top1_slowdown));  // synthetic logs record no default
  REQUIRE(std::isfinite(averages.at("learned").mape));
  const auto json = to_json(result.table);
  REQUIRE(json["models"]["learned"].contains("top10_slowdown"));
  REQUIRE(json["kernels"].size() == 4);
}

TEST_CASE("an experiment's output folder is a source: held out by the folder's name, every run's configs ranked") {
  const std::string dir = scratch_dir("study_folder");
  write_log(dir);
  // Two runs of each live space, each measuring every other config.
  const auto live = testing::synthetic_corpus(3, 5);
  std::map<std::string, std::size_t> measured;
  for (const MeasuredKernel& k : live) {
    measured[k.kernel.name()] = std::count_if(k.measurements.begin(), k.measurements.end(),
                                              [](const Measurement& m) { return m.result.ok(); });
    for (const std::string run : {"random", "evolution"}) {
      const std::string folder = dir + "/live_output/runs/" + k.kernel.name() + "/" + run + "/seed_1";
      std::filesystem::create_directories(folder);
      RecordLog log(folder + "/records.jsonl");
      log.define_kernel(k.kernel, *k.space);
      for (std::size_t i = run == "random" ? 0 : 1; i < k.measurements.size(); i += 2) {
        const Measurement& m = k.measurements[i];
        log.append(Record{"cpu-live", k.kernel.key(), k.kernel.name(), k.space->knob_names(), m.config, m.result, 0.0});
      }
    }
  }
  const std::string path = dir + "/eval.json";
  std::ofstream(path) << R"({"sources": ["corpus.jsonl", "live_output"], "split": {"by": "device", "test": ["live output"]},
                             "model": {"hidden": 16, "opcode_embedding": 8, "layers": 2, "min_opcode_count": 1},
                             "train": {"epochs": 2, "steps_per_epoch": 5, "configs_per_kernel": 12},
                             "models": ["learned", "random"]})";
  const StudyConfig config = StudyConfig::load(path);
  const StudyResult result = run_evaluation(config, load_sources(config), nullptr);
  REQUIRE(result.table.rows.size() == live.size());
  for (const KernelRow& row : result.table.rows) {
    CAPTURE(row.kernel);
    CHECK(row.configs == measured.at(row.kernel));  // both runs' halves, merged into one space
    CHECK(std::isfinite(row.models.at("learned").kendall_tau));
  }
}

TEST_CASE("a bad study config names the file and the place") {
  const std::string dir = scratch_dir("study_bad");
  struct Row { const char* text; const char* where; };
  const auto row = GENERATE(Row{R"({"sources": ["nope.jsonl"], "split": {"by": "kernel"}})", "$.sources[0]"},
                            Row{R"({"sources": [], "split": {"by": "kernel"}})", "$.sources"},
                            Row{R"({"sources": ["eval.json"], "split": {"by": "config"}})", "$.split.by"},
                            Row{R"({"sources": ["eval.json"], "split": {"by": "device"}})", "$.split"},
                            Row{R"({"sources": ["eval.json"], "split": {"by": "kernel"}, "models": ["oracle"]})", "$.models[0]"},
                            Row{R"({"sources": ["eval.json"], "split": {"by": "kernel"}, "train": {"epochs": 0}})", "$.train.epochs"},
                            Row{R"({"sources": ["eval.json"], "split": {"by": "kernel"}, "fusion_selection_weight": -1})",
                                "$.fusion_selection_weight"},
                            Row{R"({"sources": ["eval.json"], "split": {"by": "kernel"}, "fusion_selection_weight": 1,
                                    "train": {"epoch_selection": "shared"}})",
                                "$.fusion_selection_weight"},
                            Row{R"({"sources": ["eval.json"], "split": {"by": "kernel"}, "train": {"correction_scales": [0.5]}})",
                                "$.train.correction_scales"},
                            Row{R"({"sources": ["eval.json"], "split": {"by": "kernel"}, "learner": "forest"})", "$.learner"},
                            Row{R"({"sources": ["eval.json"], "split": {"by": "kernel"}, "trees": {"eta": 2}})", "$.trees.eta"},
                            Row{R"({"sources": ["eval.json"], "split": {"by": "kernel"}, "trees": "nope.json"})", "$.trees"});
  CAPTURE(row.text);
  std::ofstream(dir + "/eval.json") << row.text;
  REQUIRE_THROWS_WITH(StudyConfig::load(dir + "/eval.json"), Catch::Contains("eval.json") && Catch::Contains(row.where));
}

TEST_CASE("a study config outside the project finds the project's device specs, from any working directory") {
  // The analytical feature's device is looked up in configs/hardware; a config in a user's folder,
  // run from elsewhere, used to get a path relative to the working directory.
  const std::string dir = scratch_dir("study_outside");
  std::ofstream(dir + "/eval.json") << R"({"sources": ["eval.json"], "split": {"by": "kernel"}})";
  const auto before = std::filesystem::current_path();
  std::filesystem::current_path(dir);
  const StudyConfig config = StudyConfig::load(dir + "/eval.json");
  std::filesystem::current_path(before);
  CHECK(std::filesystem::path(config.hardware_dir).is_absolute());
  CHECK(std::filesystem::exists(std::filesystem::path(config.hardware_dir) / "host.json"));
}

TEST_CASE("random expected top-k slowdown matches enumeration on a small case") {
  MeasuredKernel k = testing::measured_kernel("tiny", 64, 64, 64);
  k.measurements.resize(4);
  const double times[4] = {1.0, 2.0, 3.0, 5.0};
  for (int i = 0; i < 4; ++i) k.measurements[i].result = MeasureResult::from_repeats({times[i]}, 0.0);
  const auto scores = score_random(k);
  REQUIRE(scores);
  // top-1: the mean slowdown (0 + 1 + 2 + 4) / 4; K = 5 covers all four configs.
  REQUIRE(scores->top1_slowdown == Approx(7.0 / 4));
  REQUIRE(scores->top5_slowdown == Approx(0.0));
  k.default_index = 2;
  REQUIRE(score_default(k)->top1_slowdown == Approx(2.0));
}

TEST_CASE("a reference scores as a pick against the best measured config, and picks compare within 5%") {
  MeasuredKernel k = testing::measured_kernel("tiny", 64, 64, 64);
  k.measurements.resize(3);
  const double times[3] = {2.0, 1.0, 4.0};
  for (int i = 0; i < 3; ++i) k.measurements[i].result = MeasureResult::from_repeats({times[i]}, 0.0);
  k.references = {{"Adams2019", 1.02}, {"Mullapudi2016", 0.5}};
  CHECK(score_reference(k, "Adams2019")->top1_slowdown == Approx(0.02));
  CHECK(score_reference(k, "Mullapudi2016")->top1_slowdown == Approx(-0.5));  // faster than every measured config
  CHECK_FALSE(score_reference(k, "Li2018"));
  EvaluationTable table;
  table.models = {"learned", "Adams2019"};
  table.references = {"Adams2019"};
  const auto row = [](double learned, double adams) {
    KernelRow r;
    r.models["learned"] = ModelScores{0, learned, 0, 0, 0};
    r.models["Adams2019"] = ModelScores{0, adams, 0, 0, 0};
    return r;
  };
  table.rows = {row(0.0, 0.0), row(0.10, 0.0), row(0.05, 0.0), row(0.0, -0.2)};
  const PickComparison c = compare_picks(table, "tile", "learned", "Adams2019", 0.05);
  CHECK(c.rows == 4);
  CHECK(c.within == 2);  // equal, and 5% slower; not 10% slower, nor level with a reference 20% faster than the best
  REQUIRE(reference_comparisons(table).size() == 1);
  CHECK(to_json(table)["picks_vs_references"][0]["within"] == 2);
  CHECK_THAT(format_table(table, false), Catch::Contains("learned's first pick within 5% of Adams2019's or faster on 2 of 4"));
}

TEST_CASE("with two test sources, averages and pick comparisons come per source as well") {
  EvaluationTable table;
  table.models = {"learned", "Adams2019"};
  table.references = {"Adams2019"};
  const auto row = [](double learned_top1, const std::string& source) {
    KernelRow r;
    r.models["learned"] = ModelScores{0.5, learned_top1, 0, 0, 0};
    const double none = std::numeric_limits<double>::quiet_NaN();
    r.models["Adams2019"] = ModelScores{none, 0.0, none, none, none};
    r.source = source;
    return r;
  };
  table.rows = {row(0.0, "networks.jsonl.gz"), row(0.2, "networks.jsonl.gz"), row(0.4, "programs.jsonl")};
  CHECK(table.sources() == std::vector<std::string>{"networks.jsonl.gz", "programs.jsonl"});
  CHECK(table.averages("tile").at("learned").top1_slowdown == Approx(0.2));
  CHECK(table.averages("tile", "networks.jsonl.gz").at("learned").top1_slowdown == Approx(0.1));
  CHECK(table.averages("tile", "programs.jsonl").at("learned").top1_slowdown == Approx(0.4));
  const auto json = to_json(table);
  CHECK(json["by_source"]["programs.jsonl"]["tile"]["learned"]["top1_slowdown"] == Approx(0.4));
  const auto comparisons = reference_comparisons(table);
  REQUIRE(comparisons.size() == 3);  // all rows, then each source
  CHECK(comparisons[1].second.source == "networks.jsonl.gz");
  CHECK(comparisons[1].second.within == 1);
  CHECK(comparisons[1].second.rows == 2);
  CHECK_THAT(format_table(table, false), Catch::Contains("on 1 of 2 (50%) of networks.jsonl.gz") && Catch::Contains("  of programs.jsonl"));
  // One source: no breakdown.
  table.rows.pop_back();
  CHECK(table.sources().empty());
  CHECK_FALSE(to_json(table).contains("by_source"));
}

TEST_CASE("a program split keeps a held-out program's kernels out of training and scores its fusion configs") {
  const std::string dir = scratch_dir("study_programs");
  write_program_log(dir);
  std::ofstream(dir + "/eval.json") << R"({"sources": ["cpu.jsonl"], "split": {"by": "program", "test_fraction": 0.5, "seed": 2},
      "model": {"hidden": 16, "opcode_embedding": 8, "min_opcode_count": 1}, "train": {"epochs": 2, "steps_per_epoch": 5}})";
  const StudyConfig config = StudyConfig::load(dir + "/eval.json");
  const LoadedSources sources = load_sources(config);
  const auto folds = make_folds(sources.kernels, config.split, config.file);
  REQUIRE(folds.size() == 1);
  const MeasuredKernel* held_program = nullptr;
  for (const MeasuredKernel* k : folds[0].test)
    if (is_fusion_space(*k)) held_program = k;
  REQUIRE(held_program != nullptr);
  for (const MeasuredKernel* k : folds[0].train) {
    CAPTURE(k->kernel.name());
    REQUIRE(k->kernel.key() != held_program->kernel.key());
    REQUIRE_FALSE(is_part_of(k->kernel, held_program->kernel.body()));
  }
  const StudyResult result = run_evaluation(config, sources, nullptr);
  REQUIRE(result.table.tasks() == std::vector<std::string>{"tile", "fusion"});
  REQUIRE(std::isfinite(result.table.averages("fusion").at("learned").kendall_tau));
  REQUIRE(to_json(result.table)["tasks"].contains("fusion"));
}

TEST_CASE("evaluation trains the tree model on the same side and scores it beside the learned one") {
  const std::string dir = scratch_dir("study_trees");
  write_program_log(dir);
  write_log(dir);
  std::ofstream(dir + "/eval.json") << R"({"sources": ["cpu.jsonl", "corpus.jsonl"], "split": {"by": "program", "test_fraction": 0.5, "seed": 2},
      "model": {"hidden": 16, "opcode_embedding": 8, "min_opcode_count": 1}, "train": {"epochs": 2, "steps_per_epoch": 5},
      "trees": {"rounds": 20, "max_depth": 3, "min_opcode_count": 1}, "models": ["learned", "trees", "random"]})";
  const StudyConfig config = StudyConfig::load(dir + "/eval.json");
  REQUIRE(config.trees.rounds == 20);
  const StudyResult result = run_evaluation(config, load_sources(config), nullptr);
  const auto tile = result.table.averages("tile").at("trees");
  CHECK(tile.kendall_tau > 0.3);
  CHECK(std::isnan(tile.mape));  // its scores rank; they are no seconds
  // A fusion space is ranked directly, not through sums of scores that do not add up.
  CHECK(std::isfinite(result.table.averages("fusion").at("trees").kendall_tau));
}

TEST_CASE("perftune train writes a trees checkpoint when the config's learner is trees") {
  const std::string dir = scratch_dir("study_train_trees");
  write_log(dir);
  std::ofstream(dir + "/train.json") << R"({"sources": ["corpus.jsonl"], "split": {"by": "kernel", "test_fraction": 0.25},
      "learner": "trees", "trees": {"rounds": 20, "max_depth": 3, "min_opcode_count": 1}})";
  const StudyConfig config = StudyConfig::load(dir + "/train.json");
  TreeTrainReport report;
  auto model = train_trees_from_config(config, load_sources(config), nullptr, &report);
  CHECK(report.kernels == 12);  // 6 of 8 kernels on 2 devices
  CHECK(model->params().rounds == 20);
}

TEST_CASE("evaluation scores the analytical model where a device spec applies") {
  const std::string dir = scratch_dir("study_analytical");
  write_log(dir);
  std::ofstream(dir + "/eval.json") << R"({"sources": ["corpus.jsonl"], "split": {"by": "kernel", "test_fraction": 0.25},
      "models": ["analytical", "random"], "analytical_device": ")" << source_path("configs/hardware/host.json") << R"("})";
  const StudyConfig config = StudyConfig::load(dir + "/eval.json");
  const StudyResult result = run_evaluation(config, load_sources(config), nullptr);
  REQUIRE(result.table.rows.size() == 4);
  for (const KernelRow& row : result.table.rows) {
    CAPTURE(row.kernel);
    REQUIRE(row.models.count("analytical") == 1);
    REQUIRE(std::isfinite(row.models.at("analytical").kendall_tau));
  }
}

TEST_CASE("leaving one program out trains a model per program and selects epochs on the other programs' fusion") {
  const std::string dir = scratch_dir("study_leave_one_program_out");
  write_program_log(dir);
  std::ofstream(dir + "/eval.json") << R"({"sources": ["cpu.jsonl"], "split": {"by": "leave_one_program_out"},
      "model": {"hidden": 16, "opcode_embedding": 8, "min_opcode_count": 1}, "train": {"epochs": 2, "steps_per_epoch": 5},
      "fusion_selection_weight": 1, "models": ["learned", "random"]})";
  const StudyConfig config = StudyConfig::load(dir + "/eval.json");
  const StudyResult result = run_evaluation(config, load_sources(config), nullptr);
  REQUIRE(result.folds.size() == 2);
  std::set<std::string> held;
  for (const FoldReport& fold : result.folds) {
    CAPTURE(fold.fold);
    held.insert(fold.fold);
    // The selection score is the other program's fusion tau: a finite number in [-1, 1].
    REQUIRE(std::isfinite(fold.training.best_selection_score));
    REQUIRE(std::abs(fold.training.best_selection_score) <= 1.0);
    const EvaluationTable table = result.fold_table(fold);
    REQUIRE(table.rows.size() == fold.rows);
    std::vector<std::string> programs;
    for (const KernelRow& row : table.rows)
      if (row.task == "fusion") programs.push_back(row.kernel);
    REQUIRE(programs == std::vector<std::string>{fold.fold});
  }
  REQUIRE(held == std::set<std::string>{"mlp_block_small", "chain"});
}

TEST_CASE("every bundled eval config loads, and the held-out Halide study trains as its validation chose") {
  PERFTUNE_REQUIRE_DATA(gemm, "kernel_tuner/gemm/RTX_Titan.json.gz");  // the GPU and TPU studies read shared data
  std::map<std::string, StudyConfig> configs;
  for (const auto& entry : std::filesystem::directory_iterator(source_path("configs/eval"))) {
    if (entry.path().extension() != ".json") continue;
    CAPTURE(entry.path().string());
    // A study of an experiment's output (halide_live_measured: runs/halide_live) needs that run unpacked first.
    std::string absent_run;
    const nlohmann::json json = nlohmann::json::parse(std::ifstream(entry.path()));
    for (const auto& source : json.at("sources"))
      if (const auto path = source.get<std::string>(); path.rfind("runs/", 0) == 0 && !std::filesystem::exists(source_path(path)))
        absent_run = path;
    if (!absent_run.empty()) {
      WARN("SKIPPED: " << entry.path().filename().string() << " reads " << absent_run << ", not unpacked here");
      continue;
    }
    CHECK_NOTHROW(configs.emplace(entry.path().stem().string(), StudyConfig::load(entry.path().string())));
  }
  REQUIRE(configs.size() >= 7);
  const StudyConfig& heldout = configs.at("halide_heldout_programs");
  const StudyConfig& validation = configs.at("halide_generated_validation");
  // The choice is made without the held-out programs: the validation study never loads them.
  for (const std::string& source : validation.sources) CHECK(source.find("cpu_corpus") == std::string::npos);
  CHECK(validation.split.by == "program");
  CHECK(heldout.train.to_json() == validation.train.to_json());
}
