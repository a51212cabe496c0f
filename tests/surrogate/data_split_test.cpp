#include <algorithm>
#include <map>
#include <set>

#include <catch2/catch.hpp>

#include "ir/fusion.h"
#include "ir/input_error.h"
#include "ir/knob_roles.h"
#include "ir/program_json.h"
#include "surrogate/fusion/fusion_evaluation.h"
#include "surrogate/training/data_split.h"
#include "synthetic_kernels.h"
#include "test_support.h"

using namespace perftune;

namespace {

// A CPU-corpus-like set: per program, its fusion measurements (a whole program) and every kernel
// of its unfused partition under two tile configs. "mlp_copy" is mlp_block_small under another
// name, so each of its kernels belongs to two programs.
std::vector<MeasuredKernel> program_corpus() {
  std::vector<Program> programs;
  for (const char* file : {"mlp_block_small", "conv_block_small", "mlp_block_tiny"})
    programs.push_back(load_program_file(source_path(std::string("configs/programs/") + file + ".json")));
  Program copy = programs.front();
  copy.set_name("mlp_copy");
  programs.push_back(copy);
  std::vector<MeasuredKernel> corpus;
  for (const Program& program : programs) {
    corpus.push_back(testing::fusion_measurements(program));
    for (const FusedKernel& fused : partition(program, FusionConfig::none(program)).kernels) {
      const auto dims = fused.kernel.body().op(fused.kernel.body().root()).shape.dims;
      if (dims.empty()) continue;
      MeasuredKernel k;
      k.kernel = fused.kernel;
      k.device = "cpu";
      k.space = std::make_shared<SearchSpace>(std::vector<Knob>{{tile_out_knob(0), {1, dims[0]}}});
      for (std::int64_t t : k.space->knobs()[0].values)
        k.measurements.push_back({Config{{t}}, MeasureResult::from_repeats({1e-6 * double(dims[0] + 64 / t)}, 0.0)});
      corpus.push_back(std::move(k));
    }
  }
  return corpus;
}

std::vector<SourcedKernel> sourced(const std::vector<MeasuredKernel>& corpus) {
  std::vector<SourcedKernel> out;
  for (const MeasuredKernel& k : corpus) out.push_back({&k, "corpus.jsonl"});
  return out;
}

SplitSpec leave_one_program_out(double validation_fraction) {
  SplitSpec spec;
  spec.by = "leave_one_program_out";
  spec.validation_fraction = validation_fraction;
  return spec;
}

}  // namespace

TEST_CASE("leaving one program out holds out each program once and never trains on it") {
  const double validation_fraction = GENERATE(0.0, 0.4);
  CAPTURE(validation_fraction);
  const auto corpus = program_corpus();
  const auto folds = make_folds(sourced(corpus), leave_one_program_out(validation_fraction), "eval.json");
  REQUIRE(folds.size() == 4);
  std::map<std::string, int> held_out;  // program -> folds that test its fusion configs
  std::set<const MeasuredKernel*> tested;
  for (const Fold& fold : folds) {
    CAPTURE(fold.name);
    REQUIRE(fold.train.size() + fold.validation.size() + fold.test.size() == corpus.size());
    std::vector<const MeasuredKernel*> programs;
    for (const MeasuredKernel* k : fold.test)
      if (is_fusion_space(*k)) programs.push_back(k);
    REQUIRE(programs.size() == 1);
    REQUIRE(programs.front()->kernel.name() == fold.name);
    ++held_out[fold.name];
    tested.insert(fold.test.begin(), fold.test.end());
    // No kernel of the held-out program trains or validates, nor a copy of one (same key): with
    // mlp_copy held out, mlp_block_small's kernels (the same graph) are tested. (A whole program's
    // fusion measurements never train: the model learns kernels.)
    for (const auto* side : {&fold.train, &fold.validation})
      for (const MeasuredKernel* k : *side) {
        CAPTURE(k->kernel.name());
        if (is_fusion_space(*k)) continue;
        REQUIRE_FALSE(is_part_of(k->kernel, programs.front()->kernel.body()));
        for (const MeasuredKernel* t : fold.test) REQUIRE(k->kernel.key() != t->kernel.key());
      }
    // Validation programs are other programs, a share of the three left, one at least left to train.
    std::set<std::string> validation_programs;
    for (const MeasuredKernel* k : fold.validation)
      if (is_fusion_space(*k)) validation_programs.insert(k->kernel.name());
    REQUIRE(validation_programs.size() == (validation_fraction > 0 ? 1u : 0u));
    REQUIRE_FALSE(validation_programs.count(fold.name));
    REQUIRE_FALSE(fold.train.empty());
  }
  REQUIRE(held_out == std::map<std::string, int>{{"conv_block_small", 1}, {"mlp_block_small", 1},
                                                 {"mlp_block_tiny", 1}, {"mlp_copy", 1}});
  REQUIRE(tested.size() == corpus.size());  // every kernel is tested by some fold
}

TEST_CASE("the split modes are read from JSON and a bad one is named") {
  const nlohmann::json good = {{"by", "leave_one_program_out"}, {"validation_fraction", 0.2}};
  const SplitSpec spec = SplitSpec::from_json(JsonView(good, "eval.json"));
  REQUIRE(spec.by == "leave_one_program_out");
  REQUIRE(spec.validation_fraction == 0.2);
  const nlohmann::json bad = {{"by", "leave_one_config_out"}};
  REQUIRE_THROWS_WITH(SplitSpec::from_json(JsonView(bad, "eval.json")),
                      Catch::Contains("eval.json") && Catch::Contains("$.by") && Catch::Contains("leave_one_program_out"));
  const nlohmann::json negative_seed = {{"by", "leave_one_program_out"}, {"seed", -3}};
  REQUIRE_THROWS_WITH(SplitSpec::from_json(JsonView(negative_seed, "eval.json")),
                      Catch::Contains("$.seed") && Catch::Contains("a non-negative integer, found -3"));
}

TEST_CASE("a device split holds out every copy of a test kernel on the test device") {
  // Two sources holding the same kernel on one device (a generated program's add equal to a
  // held-out one's): training on the copy would score remembered measurements.
  const std::vector<MeasuredKernel> corpus = program_corpus();
  const MeasuredKernel& held = corpus[1];  // a kernel of mlp_block_small, whose copy mlp_copy also holds
  std::vector<SourcedKernel> kernels;
  for (const MeasuredKernel& k : corpus) kernels.push_back({&k, "generated.jsonl"});
  kernels.push_back({&held, "heldout.jsonl"});
  SplitSpec spec;
  spec.by = "device";
  spec.test = {"heldout"};
  const auto folds = make_folds(kernels, spec, "eval.json");
  REQUIRE(folds.front().test.size() == 1);
  CHECK(folds.front().left_out == 2);  // the kernel in mlp_block_small and its copy in mlp_copy
  for (const auto* side : {&folds.front().train, &folds.front().validation})
    for (const MeasuredKernel* k : *side) CHECK(k->kernel.key() != held.kernel.key());
  CHECK(folds.front().train.size() + folds.front().validation.size() == corpus.size() - 2);
}

TEST_CASE("a device split refuses a kernel shared by the test side and a source that must be disjoint from it") {
  // A corpus collected with the test networks' kernels kept off ("disjoint_from_test"): a shared
  // kernel means the collection's split broke, an error naming the kernel, not a silent leave-out.
  const std::vector<MeasuredKernel> corpus = program_corpus();
  const MeasuredKernel& held = corpus[1];
  std::vector<SourcedKernel> kernels;
  for (const MeasuredKernel& k : corpus) kernels.push_back({&k, "corpus/networks.jsonl.gz"});
  kernels.push_back({&held, "corpus/heldout_networks.jsonl.gz"});
  const nlohmann::json json = {{"by", "device"}, {"test", {"heldout_networks"}}, {"disjoint_from_test", {"networks.jsonl"}}};
  const SplitSpec spec = SplitSpec::from_json(JsonView(json, "eval.json"));
  REQUIRE(spec.disjoint_from_test == std::vector<std::string>{"networks.jsonl"});
  CHECK_THROWS_WITH(make_folds(kernels, spec, "eval.json"), Catch::Contains("eval.json") && Catch::Contains("$.split.disjoint_from_test") &&
                                                                Catch::Contains(held.kernel.key()) && Catch::Contains("corpus/networks.jsonl.gz"));
  // Without the shared kernel the split stands, the test source's own kernel tested.
  kernels.erase(std::remove_if(kernels.begin(), kernels.end(),
                               [&](const SourcedKernel& k) { return k.source == "corpus/networks.jsonl.gz" && k.kernel->kernel.key() == held.kernel.key(); }),
                kernels.end());
  const auto folds = make_folds(kernels, spec, "eval.json");
  CHECK(folds.front().test.size() == 1);
  CHECK(folds.front().left_out == 0);
  // Only a device split names its test sources.
  const nlohmann::json by_kernel = {{"by", "kernel"}, {"disjoint_from_test", {"networks"}}};
  CHECK_THROWS_WITH(SplitSpec::from_json(JsonView(by_kernel, "eval.json")), Catch::Contains("$.disjoint_from_test"));
}

TEST_CASE("a device split's validation_fraction validates whole programs of the training side") {
  const std::vector<MeasuredKernel> corpus = program_corpus();
  std::vector<SourcedKernel> kernels = sourced(corpus);
  kernels.push_back({&corpus[1], "heldout.jsonl"});
  SplitSpec spec;
  spec.by = "device";
  spec.test = {"heldout"};
  spec.validation_fraction = 0.5;
  const Fold fold = make_folds(kernels, spec, "eval.json").front();
  std::set<std::string> validation_programs, training_programs;
  for (const MeasuredKernel* k : fold.validation)
    if (is_fusion_space(*k)) validation_programs.insert(k->kernel.name());
  for (const MeasuredKernel* k : fold.train)
    if (is_fusion_space(*k)) training_programs.insert(k->kernel.name());
  REQUIRE(validation_programs.size() == 2);  // half of the 4 program groups
  REQUIRE(training_programs.size() == 2);
  // A kernel validates only with a program that holds it, and trains only with one that does too.
  const auto check_side = [&](const std::vector<const MeasuredKernel*>& side, const std::set<std::string>& programs) {
    for (const MeasuredKernel* k : side)
      if (!is_fusion_space(*k)) {
        bool in_program = false;
        for (const MeasuredKernel& program : corpus)
          in_program |= is_fusion_space(program) && programs.count(program.kernel.name()) &&
                        is_part_of(k->kernel, program.kernel.body());
        CHECK(in_program);
      }
  };
  check_side(fold.validation, validation_programs);
  check_side(fold.train, training_programs);
  CHECK(fold.train.size() + fold.validation.size() == corpus.size() - 2);  // the held-out kernel's two copies left out
  // Seeded: the same seed validates the same programs.
  std::set<std::string> again;
  const Fold repeated = make_folds(kernels, spec, "eval.json").front();
  for (const MeasuredKernel* k : repeated.validation)
    if (is_fusion_space(*k)) again.insert(k->kernel.name());
  CHECK(again == validation_programs);
}
