// collect writes a record log with kernel definitions and resumes without re-measuring.
#include "offline/corpus_collection.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "hardware/halide/fusion_space.h"
#include "hardware/halide/halide_schedule.h"
#include "hardware/hardware_test_support.h"
#include "ir/file_io.h"
#include "ir/input_error.h"
#include "ir/knob_roles.h"
#include "ir/program_json.h"
#include "ir/record_log.h"
#include "ir/source.h"

namespace perftune {
namespace {

// Counts what reaches the real CPU backend.
class CountingBackend : public Backend {
 public:
  explicit CountingBackend(Backend& inner) : inner_(inner) {}
  std::vector<MeasureResult> measure(const Kernel& k, const SearchSpace& s, std::span<const Config> c) override {
    measured += c.size();
    return inner_.measure(k, s, c);
  }
  std::string fingerprint() const override { return inner_.fingerprint(); }
  std::size_t measured = 0;

 private:
  Backend& inner_;
};

TEST_CASE("collect measures the tiny corpus and resumes without re-measuring", "[hardware][collect]") {
  CollectSpec spec = load_collect_spec(source_path("configs/collect/tiny.json"));
  spec.output = scratch_dir("collect_resume") + "/tiny.jsonl";
  CountingBackend backend(shared_halide_backend());
  std::size_t progress_calls = 0;
  const CollectSummary first = collect_corpus(spec, backend, [&](const CollectProgress& p) {
    ++progress_calls;
    CHECK(p.done <= p.planned);
  });
  CHECK(first.measured > 10);
  CHECK(first.measured == backend.measured);
  CHECK(first.failed == 0);
  CHECK(first.log_records == first.measured);
  CHECK(progress_calls > 0);
  const LoadedLog log = RecordLog::load(spec.output);
  CHECK(log.kernels.size() == first.kernels);  // every kernel is defined once
  for (const Record& r : log.records) CHECK(log.kernels.count(r.kernel_key) == 1);

  // Interrupted run: drop the last records (and tear the last line) and resume.
  {
    std::string text = read_file(spec.output);
    for (int lines = 0; lines < 4; ++lines) text.erase(text.find_last_of('\n', text.size() - 2) + 1);
    text += "{\"v\":1,\"type\":\"rec";  // a torn line, as a kill mid-write leaves it
    std::ofstream(spec.output, std::ios::trunc) << text;
  }
  backend.measured = 0;
  const CollectSummary second = collect_corpus(spec, backend);
  CHECK(second.measured == 4);  // only what was lost
  CHECK(backend.measured == 4);
  CHECK(second.skipped == first.measured - 4);
  CHECK(second.log_records == first.measured);

  backend.measured = 0;
  const CollectSummary third = collect_corpus(spec, backend);
  CHECK(third.measured == 0);
  CHECK(backend.measured == 0);
}

// Measures nothing: what collect plans is what it asks for.
class PlanBackend : public Backend {
 public:
  std::vector<MeasureResult> measure(const Kernel& k, const SearchSpace& s, std::span<const Config> c) override {
    for (const Config& config : c) asked[k.key()].push_back(config);
    return std::vector<MeasureResult>(c.size(), MeasureResult::from_repeats({1e-3}, 0.0));
  }
  std::string fingerprint() const override { return "plan"; }
  std::map<std::string, std::vector<Config>> asked;
};

TEST_CASE("a log recorded before a knob existed is collected into within its own knobs", "[hardware][collect]") {
  const std::string dir = scratch_dir("collect_new_knob");
  std::ofstream(dir + "/collect.json") << R"({"output": "out.jsonl", "programs": [")" + source_path("configs/programs/conv_block_small.json") +
                                              R"("], "tile_configs_per_kernel": 12, "near_heuristic_share": 0.5, "fusion_variants_per_program": 0,
    "program_fusion_configs": 0})";
  CollectSpec spec = load_collect_spec(dir + "/collect.json");
  spec.output = dir + "/out.jsonl";
  std::filesystem::remove(spec.output);
  PlanBackend backend;
  collect_corpus(spec, backend);
  // The log as a build before rows.dim wrote it: records at the knob's default lack it, the others
  // were never planned, and the kernel definitions do not list it.
  std::string old_log;
  std::size_t kept = 0, dropped = 0;
  std::istringstream lines(read_file(spec.output));
  for (std::string line; std::getline(lines, line);) {
    nlohmann::json entry = nlohmann::json::parse(line);
    if (entry.at("type") == "kernel") {
      auto& knobs = entry.at("knobs");
      knobs.erase(std::remove_if(knobs.begin(), knobs.end(), [](const nlohmann::json& k) { return k.at("name") == "rows.dim"; }), knobs.end());
    } else if (entry.at("type") == "record" && entry.at("config").contains("rows.dim")) {
      if (entry.at("config").at("rows.dim") != -1) {
        ++dropped;
        continue;
      }
      entry.at("config").erase("rows.dim");
      ++kept;
    }
    old_log += entry.dump() + "\n";
  }
  REQUIRE(kept > 0);
  REQUIRE(dropped > 0);
  std::ofstream(spec.output, std::ios::trunc) << old_log;
  // Collected again, the kernel is planned within the log's knobs: its records still fit the log's
  // definition (the log loads), none names the new knob, and a third run measures nothing.
  collect_corpus(spec, backend);
  const LoadedLog log = RecordLog::load(spec.output);
  CHECK(log.records.size() >= kept);
  for (const Record& r : log.records) CHECK(std::count(r.knob_names.begin(), r.knob_names.end(), "rows.dim") == 0);
  CHECK(collect_corpus(spec, backend).measured == 0);
}

TEST_CASE("collect reads a folder of programs and plans schedules around the heuristic one", "[hardware][collect]") {
  const std::string dir = scratch_dir("collect_folder");
  std::filesystem::create_directories(dir + "/programs");
  std::filesystem::copy_file(source_path("configs/programs/mlp_block_tiny.json"), dir + "/programs/b.json");
  std::filesystem::copy_file(source_path("configs/programs/conv_block_small.json"), dir + "/programs/a.json");
  std::ofstream(dir + "/programs/notes.txt") << "not a program";
  std::ofstream(dir + "/collect.json") << R"({"output": "out.jsonl", "programs": ["programs"], "tile_configs_per_kernel": 10,
    "near_heuristic_share": 0.5, "fusion_variants_per_program": 0, "program_fusion_configs": 2})";
  CollectSpec spec = load_collect_spec(dir + "/collect.json");
  REQUIRE(spec.programs == std::vector<std::string>{dir + "/programs/a.json", dir + "/programs/b.json"});
  spec.output = dir + "/out.jsonl";
  PlanBackend backend;
  collect_corpus(spec, backend);
  std::size_t tile_kernels = 0;
  const LoadedLog log = RecordLog::load(spec.output);
  for (const auto& [key, configs] : backend.asked) {
    const auto& definition = log.kernels.at(key);
    if (!definition.space->knobs().empty() && definition.space->knobs().front().name.rfind("fuse.", 0) == 0) continue;
    ++tile_kernels;
    const Config heuristic = heuristic_config(*definition.space, definition.kernel);
    REQUIRE(std::count(configs.begin(), configs.end(), heuristic) == 1);
    // Half of them within three one-knob changes of the heuristic schedule.
    std::size_t near = 0;
    for (const Config& c : configs) {
      std::size_t differ = 0;
      for (std::size_t k = 0; k < c.values.size(); ++k) differ += c.values[k] != heuristic.values[k];
      near += differ <= 3;
    }
    CHECK(near >= 5);
  }
  CHECK(tile_kernels >= 3);
}

TEST_CASE("collect plans the fusion configs' kernels as the program ran them, last, leaving every other plan as it was", "[hardware][collect]") {
  const std::string dir = scratch_dir("collect_fused_kernels");
  std::filesystem::copy_file(source_path("configs/programs/conv_block_small.json"), dir + "/a.json");
  const auto plan = [&](const std::string& extra, const std::string& name) {
    std::ofstream(dir + "/" + name + ".json") << R"({"output": "out.jsonl", "programs": ["a.json"], "tile_configs_per_kernel": 6,
      "fusion_variants_per_program": 0, "program_fusion_configs": 4)" + extra + "}";
    CollectSpec spec = load_collect_spec(dir + "/" + name + ".json");
    spec.output = dir + "/" + name + ".jsonl";
    PlanBackend backend;
    collect_corpus(spec, backend);
    return std::make_pair(backend.asked, RecordLog::load(spec.output));
  };
  const auto [without, without_log] = plan("", "without");
  const auto [with, log] = plan(R"(, "fused_kernel_configs": 6)", "with");
  for (const auto& [key, configs] : without) REQUIRE(with.at(key) == configs);
  std::size_t fused = 0, placed = 0;
  for (const auto& [key, configs] : with) {
    if (without.count(key)) continue;
    ++fused;
    const auto& definition = log.kernels.at(key);
    std::size_t ops = 0;
    const Program& body = definition.kernel.body();
    for (OpId id = 0; id < body.size(); ++id) ops += !body.op(id).is_parameter();
    CHECK(ops >= 2);  // a single op is a kernel of the unfused partition, planned already
    // The heuristic schedule, but for where the program config computed the fused producers.
    const Config heuristic = heuristic_config(*definition.space, definition.kernel);
    for (const Config& c : configs) {
      bool moved = false;
      for (std::size_t k = 0; k < c.values.size(); ++k)
        if (c.values[k] != heuristic.values[k]) {
          CHECK(definition.space->knobs()[k].name.rfind("fuse.", 0) == 0);
          moved = true;
        }
      placed += moved;
    }
  }
  CHECK(fused >= 2);
  CHECK(placed >= 1);

  // Topped up: the same schedules first, then walks of at most three knob changes from the first.
  const auto [topped, topped_log] = plan(R"(, "fused_kernel_configs": 6, "fused_kernel_schedules": 4)", "topped");
  for (const auto& [key, configs] : with) {
    const std::vector<Config>& more = topped.at(key);
    REQUIRE(std::equal(configs.begin(), configs.end(), more.begin()));
    if (without.count(key)) {
      CHECK(more.size() == configs.size());
      continue;
    }
    CHECK(more.size() == std::max<std::size_t>(configs.size(), 4));
    for (std::size_t i = configs.size(); i < more.size(); ++i) {
      std::size_t differ = 0;
      for (std::size_t k = 0; k < more[i].values.size(); ++k) differ += more[i].values[k] != configs.front().values[k];
      CHECK((differ >= 1 && differ <= 3));
    }
  }
}

// Measures nothing; its peers are two named references per kernel.
class PeeringBackend : public PlanBackend {
 public:
  std::vector<PeerMeasurement> measure_peers(const Kernel& kernel) override {
    ++peered[kernel.key()];
    return {{"Adams2019", "machine 2,16777216,40", MeasureResult::from_repeats({2e-3}, 1.0)},
            {"Li2018", "machine 16,16777216,40", MeasureResult::failure(MeasureStatus::kTimeout, "over 60 s", 60)}};
  }
  std::map<std::string, int> peered;
};

TEST_CASE("collect with references measures each kernel's peers once, resumably", "[hardware][collect]") {
  const std::string dir = scratch_dir("collect_references");
  std::ofstream(dir + "/collect.json") << R"({"output": "out.jsonl", "programs": [")" + source_path("configs/programs/mlp_block_tiny.json") +
                                              R"("], "tile_configs_per_kernel": 3, "fusion_variants_per_program": 0,
    "program_fusion_configs": 2, "references": true})";
  CollectSpec spec = load_collect_spec(dir + "/collect.json");
  REQUIRE(spec.references);
  spec.output = dir + "/out.jsonl";
  PeeringBackend backend;
  CollectProgress last;
  const CollectSummary first = collect_corpus(spec, backend, [&](const CollectProgress& p) { last = p; });
  REQUIRE(first.reference_kernels == first.kernels);
  REQUIRE(backend.peered.size() == first.kernels);
  CHECK(last.references_done == first.kernels);
  CHECK(last.references_planned == first.kernels);
  CHECK_THAT(progress_bar(last), Catch::Contains("references " + std::to_string(first.kernels) + "/"));
  // The references come after every config (a sitting that stops early leaves whole kernels).
  const std::string text = read_file(spec.output);
  CHECK(text.rfind("\"type\":\"record\"") < text.find("\"reference\""));
  const Corpus corpus = load_source(spec.output);
  for (const MeasuredKernel& k : corpus.kernels) {
    CAPTURE(k.kernel.name());
    REQUIRE(k.references.size() == 1);  // the timeout is logged, not a reference
    CHECK(k.references.at("Adams2019") == 2e-3);
  }
  const CollectSummary second = collect_corpus(spec, backend);
  CHECK(second.reference_kernels == 0);
  for (const auto& [key, times] : backend.peered) CHECK(times == 1);
}

TEST_CASE("collect plans a proposer's model picks after each kernel's sampled configs, resumably", "[hardware][collect]") {
  const std::string dir = scratch_dir("collect_model_picks");
  const std::string programs = R"("programs": [")" + source_path("configs/programs/mlp_block_tiny.json") + R"("])";
  std::ofstream(dir + "/plain.json") << R"({"output": "out.jsonl", )" + programs + R"(, "tile_configs_per_kernel": 4,
    "fusion_variants_per_program": 0, "program_fusion_configs": 2})";
  std::ofstream(dir + "/picks.json") << R"({"output": "out.jsonl", )" + programs + R"(, "tile_configs_per_kernel": 4,
    "fusion_variants_per_program": 0, "program_fusion_configs": 2,
    "model_picks": {"per_kernel": 3, "model": {"type": "analytical"}, "strategy": {"type": "evolution"}}})";
  CollectSpec plain = load_collect_spec(dir + "/plain.json");
  CollectSpec spec = load_collect_spec(dir + "/picks.json");
  REQUIRE(spec.model_picks_per_kernel == 3);
  CHECK(spec.model_picks.at("model").at("type") == "analytical");
  plain.output = spec.output = dir + "/out.jsonl";
  CHECK_THROWS_AS(collect_corpus(spec, shared_halide_backend()), std::invalid_argument);  // picks, and no proposer

  // A stand-in proposer: the first configs of a one-knob walk from the last anchor (the heuristic
  // schedule; a program's greedy placement), one of them an anchor itself, which is never planned.
  std::map<std::string, std::size_t> anchors_seen;
  const ProposeConfigs propose = [&](const Kernel& kernel, const SearchSpace& space, std::span<const Config> anchors, std::size_t n) {
    anchors_seen[kernel.key()] = anchors.size();
    std::vector<Config> out = {anchors.front()};
    for (const Config& c : space.one_knob_changes(anchors.back()))
      if (out.size() <= n) out.push_back(c);
    return out;
  };
  PlanBackend without, with;
  const CollectSummary before = collect_corpus(plain, without);
  std::filesystem::remove(spec.output);
  const CollectSummary after = collect_corpus(spec, with, {}, propose);
  CHECK(after.kernels == before.kernels);
  REQUIRE(with.asked.size() == without.asked.size());
  std::size_t picked = 0;
  for (const auto& [key, configs] : with.asked) {
    CAPTURE(key);
    const std::vector<Config>& sampled = without.asked.at(key);
    REQUIRE(configs.size() >= sampled.size());
    // The sampled plan is unchanged and comes first; the picks follow, distinct, anchors left out.
    CHECK(std::equal(sampled.begin(), sampled.end(), configs.begin()));
    CHECK(std::set<Config>(configs.begin(), configs.end()).size() == configs.size());
    CHECK(configs.size() <= sampled.size() + 3);
    picked += configs.size() - sampled.size();
    CHECK(anchors_seen.at(key) == 2);  // unscheduled and heuristic; a program's none and greedy
  }
  CHECK(picked > with.asked.size());
  // A rerun plans the same picks: nothing is left to measure.
  CHECK(collect_corpus(spec, with, {}, propose).measured == 0);
}

TEST_CASE("a bad collect config names the file and the field", "[hardware][collect]") {
  const std::string dir = scratch_dir("collect_bad");
  const std::string path = dir + "/bad.json";
  std::ofstream(path) << R"({"output": "x.jsonl", "programs": ["missing.json"]})";
  CHECK_THROWS_WITH(load_collect_spec(path), Catch::Contains("bad.json") && Catch::Contains("$.programs[0]"));
  std::ofstream(path, std::ios::trunc) << R"({"output": "x.jsonl", "programs": [], "tile_configs_per_kernel": 0})";
  CHECK_THROWS_AS(load_collect_spec(path), InputError);
  std::ofstream(path, std::ios::trunc) << R"({"output": "x.jsonl", "programs": [")" + source_path("configs/programs/mlp_block_tiny.json") +
                                              R"("], "model_picks": {"model": {"type": "analytical"}}})";
  CHECK_THROWS_WITH(load_collect_spec(path), Catch::Contains("bad.json") && Catch::Contains("$.model_picks") && Catch::Contains("per_kernel"));
  // The "cpu" object is read as a campaign's cpu backend is (halide_backend_json.h).
  const std::string program = source_path("configs/programs/mlp_block_tiny.json");
  std::ofstream(path, std::ios::trunc) << R"({"output": "x.jsonl", "programs": [")" + program +
                                              R"("], "cpu": {"min_repeats": 3, "max_repeats": 2}})";
  CHECK_THROWS_WITH(load_collect_spec(path), Catch::Contains("bad.json") && Catch::Contains("$.cpu.max_repeats"));
  std::ofstream(path, std::ios::trunc) << R"({"output": "x.jsonl", "programs": [")" + program +
                                              R"("], "cpu": {"threads": 0, "parallel_guard_attempts": 0}})";
  CHECK(load_collect_spec(path).cpu.parallel_guard_attempts == 0);
  // Issue 81: per-kernel counts of 1e9 planned past 60 s (the sampler draws 20 times the count).
  for (const char* key : {"tile_configs_per_kernel", "fusion_variants_per_program", "program_fusion_configs", "fused_kernel_configs",
                          "fused_kernel_schedules"}) {
    CAPTURE(key);
    std::ofstream(path, std::ios::trunc) << R"({"output": "x.jsonl", "programs": [")" + program + R"("], ")" + key + R"(": 1e9})";
    CHECK_THROWS_WITH(load_collect_spec(path), Catch::Contains("bad.json") && Catch::Contains(std::string("$.") + key) &&
                                                   Catch::Contains("from 0 to 100000"));
  }
  std::ofstream(path, std::ios::trunc) << R"({"output": "x.jsonl", "programs": [")" + program +
                                              R"("], "model_picks": {"per_kernel": 1e9, "model": {"type": "analytical"}}})";
  CHECK_THROWS_WITH(load_collect_spec(path), Catch::Contains("$.model_picks.per_kernel") && Catch::Contains("from 1 to 100000"));
}

// The content keys of a network's kernels as it is tuned (network_partition).
std::set<std::string> network_kernel_keys(const std::string& path) {
  const std::optional<FusionPlan> plan = network_partition(load_program_file(path));
  std::set<std::string> keys;
  for (const FusedKernel& fused : plan->kernels) keys.insert(fused.kernel.key());
  return keys;
}

TEST_CASE("collect tiles each training network's distinct kernels and keeps a held-out network's off", "[hardware][collect]") {
  const std::string dir = scratch_dir("collect_networks");
  const std::string mlp = source_path("configs/programs/mlp_block_small.json");
  const std::string transformer = source_path("configs/programs/transformer_block_small.json");
  const std::set<std::string> held = network_kernel_keys(mlp);
  std::set<std::string> train = network_kernel_keys(transformer), shared;
  for (const std::string& key : held)
    if (!train.insert(key).second) shared.insert(key);
  auto plan = [&](const std::string& held_out) {
    const std::string path = dir + "/networks.json";
    std::ofstream(path, std::ios::trunc) << R"({"output": ")" + dir + R"(/networks.jsonl", "tile_configs_per_kernel": 2,
        "networks": {"train": [")" + transformer + R"(", ")" + mlp + R"("], "held_out": [)" + held_out + "]}}";
    CollectSpec spec = load_collect_spec(path);
    spec.plan_only = true;
    return collect_corpus(spec, shared_halide_backend());
  };
  const CollectSummary all = plan("");
  CHECK(all.kernels == train.size());  // each distinct kernel once, the two networks' shared ones too
  CHECK(all.held_out_kernels == 0);
  const CollectSummary split = plan("\"" + mlp + "\"");
  CHECK(split.held_out_kernels == held.size());  // every kernel of the held-out network is kept off
  CHECK(split.kernels == train.size() - held.size());
  CHECK(split.planned < all.planned);
  // A network section needs a training network; programs are then optional.
  const std::string bad = dir + "/bad.json";
  std::ofstream(bad) << R"({"output": "x.jsonl", "networks": {"held_out": [")" + mlp + R"("]}})";
  CHECK_THROWS_WITH(load_collect_spec(bad), Catch::Contains("bad.json") && Catch::Contains("$.networks") && Catch::Contains("train"));
  std::ofstream(bad, std::ios::trunc) << R"({"output": "x.jsonl", "networks": {"train": ["missing.json"]}})";
  CHECK_THROWS_WITH(load_collect_spec(bad), Catch::Contains("$.networks.train[0]"));
  std::ofstream(bad, std::ios::trunc) << R"({"output": "x.jsonl"})";
  CHECK_THROWS_WITH(load_collect_spec(bad), Catch::Contains("programs"));
}

TEST_CASE("collect measures network blocks over their fusion placements, and a held-out side as the test corpus", "[hardware][collect]") {
  const std::string dir = scratch_dir("collect_network_blocks");
  const std::string mlp = source_path("configs/programs/mlp_block_small.json");
  const std::string transformer = source_path("configs/programs/transformer_block_small.json");
  const auto spec_for = [&](const std::string& measure) {
    const std::string path = dir + "/" + measure + ".json";
    std::ofstream(path) << R"({"output": ")" + dir + "/" + measure + R"(.jsonl", "tile_configs_per_kernel": 2, "program_fusion_configs": 2,
        "networks": {"train": [")" + transformer + R"("], "held_out": [")" + mlp + R"("], "measure": ")" + measure +
                               R"(", "block_kernels": 2}})";
    return load_collect_spec(path);
  };
  PlanBackend backend;
  // The held-out side: every kernel of the held-out network, and its blocks; nothing kept off.
  const CollectSpec held = spec_for("held_out");
  REQUIRE(held.measure_held_out_networks);
  CHECK(collect_corpus(held, backend).held_out_kernels == 0);
  std::set<std::string> held_keys;
  std::size_t held_blocks = 0;
  for (const MeasuredKernel& k : load_source(held.output).kernels) {
    held_keys.insert(k.kernel.key());
    if (is_fusion_space(*k.space)) ++held_blocks;
  }
  CHECK(held_blocks > 0);
  for (const std::string& key : network_kernel_keys(mlp)) CHECK(held_keys.count(key) == 1);
  // The training side: its blocks too, and not one kernel, tiled or whole, of the held-out plan.
  const CollectSpec train = spec_for("train");
  const CollectSummary summary = collect_corpus(train, backend);
  std::size_t train_blocks = 0;
  for (const MeasuredKernel& k : load_source(train.output).kernels) {
    CAPTURE(k.kernel.name());
    CHECK(held_keys.count(k.kernel.key()) == 0);
    if (is_fusion_space(*k.space)) ++train_blocks;
  }
  CHECK(train_blocks > 0);
  CHECK(summary.kernels > network_kernel_keys(transformer).size() - summary.held_out_kernels);
  // A side to measure is one of the two, and the held-out side needs networks.
  const std::string bad = dir + "/bad.json";
  std::ofstream(bad) << R"({"output": "x.jsonl", "networks": {"train": [")" + mlp + R"("], "measure": "test"}})";
  CHECK_THROWS_WITH(load_collect_spec(bad), Catch::Contains("$.networks.measure") && Catch::Contains("held_out"));
  std::ofstream(bad, std::ios::trunc) << R"({"output": "x.jsonl", "networks": {"train": [")" + mlp + R"("], "measure": "held_out"}})";
  CHECK_THROWS_WITH(load_collect_spec(bad), Catch::Contains("$.networks.measure"));
}

}  // namespace
}  // namespace perftune
