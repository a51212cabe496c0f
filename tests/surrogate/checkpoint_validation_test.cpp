// Checkpoints are checked (issue 81, items 8, 9, 14): weights must be finite, every field in its
// range, the files a checkpoint names must sit beside it, and hyper-parameters are bounded before
// anything is allocated. Each case edits a checkpoint a brief training run wrote.
#include <sys/stat.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>

#include <catch2/catch.hpp>

#include "ir/input_error.h"
#include "surrogate/gnn/gnn_state.h"
#include "surrogate/learned_model.h"
#include "surrogate/training/trainer.h"
#include "surrogate/trees/tree_training.h"
#include "synthetic_kernels.h"
#include "test_support.h"

using namespace perftune;

namespace {

namespace fs = std::filesystem;

// One GNN checkpoint for every case (training is the slow part): model.json + model.pt in `dir`.
const std::string& gnn_checkpoint_dir() {
  static const std::string dir = [] {
    const std::string d = scratch_dir("checkpoint_validation_gnn");
    const auto corpus = testing::synthetic_corpus(2, 4);
    TrainOptions options;
    options.epochs = 1;
    options.steps_per_epoch = 2;
    options.configs_per_kernel = 4;
    train_gnn(testing::pointers(corpus), {}, testing::small_gnn_params(16, 8), options, nullptr)->save(d + "/model.json");
    return d;
  }();
  return dir;
}

nlohmann::json read_json(const std::string& path) { return nlohmann::json::parse(std::ifstream(path)); }

// Writes `json` as NAME.json beside the trained checkpoint and returns its path.
std::string variant(const nlohmann::json& json, const std::string& name) {
  const std::string path = gnn_checkpoint_dir() + "/" + name + ".json";
  std::ofstream(path) << json.dump();
  return path;
}

// The InputError that loading `path` raises; fails the test when loading succeeds.
InputError load_error(const std::string& path) {
  try {
    load_learned_model(path);
  } catch (const InputError& error) {
    return error;
  }
  FAIL("loaded " << path);
  throw std::logic_error("unreachable");
}

}  // namespace

TEST_CASE("a GNN checkpoint whose weights are NaN, infinite or near float's edge is refused, naming the tensor") {
  const float value = GENERATE(NAN, INFINITY, 3e38f);
  CAPTURE(value);
  const std::string dir = scratch_dir("checkpoint_validation_weights");
  const auto corpus = testing::synthetic_corpus(2, 4);
  TrainOptions options;
  options.epochs = 1;
  options.steps_per_epoch = 1;
  options.configs_per_kernel = 4;
  auto model = train_gnn(testing::pointers(corpus), {}, testing::small_gnn_params(16, 8), options, nullptr);
  {
    torch::NoGradGuard no_grad;
    for (auto& parameter : model->state().members.front().model->parameters()) parameter.fill_(value);
  }
  model->save(dir + "/model.json");
  const InputError error = load_error(dir + "/model.json");
  CHECK(error.file() == dir + "/model.pt");
  CHECK(error.place().rfind("parameter ", 0) == 0);
  CHECK_THAT(error.what(), Catch::Contains(std::isfinite(value) ? "magnitude" : "finite weights"));
}

TEST_CASE("a GNN checkpoint's vocabulary is checked against its ranges and the opcode capacity") {
  nlohmann::json json = read_json(gnn_checkpoint_dir() + "/model.json");
  // The synthetic kernels' knobs are not generic: a generic knob's slot is added, valid as written.
  const std::string knob = "probe";
  json["vocabulary"]["knobs"][knob] = {{"slot", 23}, {"lo", 0.0}, {"hi", 3.0}};
  SECTION("lo above hi") {
    auto bad = json;
    bad["vocabulary"]["knobs"][knob]["lo"] = bad["vocabulary"]["knobs"][knob]["hi"].get<double>() + 1;
    const InputError error = load_error(variant(bad, "lo_above_hi"));
    CHECK(error.place() == "$.vocabulary.knobs." + knob + ".lo");
  }
  SECTION("hi of 1e308") {
    auto bad = json;
    bad["vocabulary"]["knobs"][knob]["hi"] = 1e308;
    CHECK(load_error(variant(bad, "hi_huge")).place() == "$.vocabulary.knobs." + knob + ".hi");
  }
  SECTION("100,000 opcodes against a capacity of 256") {
    auto bad = json;
    bad["params"]["opcode_capacity"] = 256;
    nlohmann::json opcodes = nlohmann::json::array();
    for (int i = 0; i < 100000; ++i) opcodes.push_back("op" + std::to_string(i));
    bad["vocabulary"]["opcodes"] = opcodes;
    const InputError error = load_error(variant(bad, "many_opcodes"));
    CHECK(error.place() == "$.vocabulary.opcodes");
    CHECK_THAT(error.what(), Catch::Contains("opcode_capacity 256"));
  }
}

TEST_CASE("a checkpoint's weights and booster must be bare file names beside it") {
  const nlohmann::json json = read_json(gnn_checkpoint_dir() + "/model.json");
  const std::string outside = scratch_dir("checkpoint_validation_outside") + "/model.pt";
  fs::copy_file(gnn_checkpoint_dir() + "/model.pt", outside, fs::copy_options::overwrite_existing);
  const std::string name = GENERATE_COPY(as<std::string>{}, outside, "../checkpoint_validation_outside/model.pt", "sub/model.pt", "..", "");
  CAPTURE(name);
  auto bad = json;
  bad["weights"] = name;
  const InputError error = load_error(variant(bad, "weights_elsewhere"));
  CHECK(error.place() == "$.weights");
  CHECK_THAT(error.what(), Catch::Contains("a bare file name"));
}

TEST_CASE("hyper-parameters in a checkpoint are bounded before anything is allocated") {
  const nlohmann::json json = read_json(gnn_checkpoint_dir() + "/model.json");
  struct Case {
    const char* key;
    double value;
  };
  const Case c = GENERATE(Case{"layers", 100000}, Case{"hidden", 1099511627776.0}, Case{"opcode_capacity", 3e9},
                          Case{"opcode_embedding", 1e6}, Case{"head_layers", 1e9}, Case{"transformer_layers", 1e5});
  CAPTURE(c.key, c.value);
  auto bad = json;
  bad["params"][c.key] = static_cast<std::int64_t>(c.value);
  const auto start = std::chrono::steady_clock::now();
  const InputError error = load_error(variant(bad, std::string("big_") + c.key));
  CHECK(error.place() == std::string("$.params.") + c.key);
  CHECK(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() < 5.0);
  // Each within its bound, together too large: named as the product it is.
  auto together = json;
  together["params"]["hidden"] = 4096;
  together["params"]["layers"] = 200;
  CHECK_THAT(load_error(variant(together, "big_together")).what(), Catch::Contains("weights"));
}

TEST_CASE("a checkpoint with a key twice says so, not that it is not JSON, whichever its format") {
  const std::string dir = gnn_checkpoint_dir();
  std::string text;
  {
    std::ifstream in(dir + "/model.json");
    text.assign(std::istreambuf_iterator<char>(in), {});
  }
  const auto brace = text.find('{');
  const std::string twice = dir + "/twice.json";
  std::ofstream(twice) << text.substr(0, brace + 1) + "\"weights\": \"model.pt\"," + text.substr(brace + 1);
  const InputError error = load_error(twice);
  CHECK_THAT(error.what(), Catch::Contains("appears twice") && !Catch::Contains("not JSON"));
  std::ofstream(dir + "/tree_twice.json") << R"({"format": "perftune-trees-checkpoint", "format": "perftune-trees-checkpoint"})";
  CHECK_THAT(load_error(dir + "/tree_twice.json").what(), Catch::Contains("appears twice") && !Catch::Contains("perftune-gnn-checkpoint"));
}

TEST_CASE("a tree checkpoint's depth, rounds and booster are checked") {
  const std::string dir = scratch_dir("checkpoint_validation_trees");
  TreeParams params;
  params.rounds = 5;
  params.max_depth = 3;
  params.min_opcode_count = 1;
  params.threads = 1;
  const auto corpus = testing::synthetic_corpus(3, 4);
  train_trees(testing::pointers(corpus), params, nullptr)->save(dir + "/trees.json");
  const nlohmann::json json = read_json(dir + "/trees.json");
  const auto write = [&](const nlohmann::json& j, const std::string& name) {
    std::ofstream(dir + "/" + name + ".json") << j.dump();
    return dir + "/" + name + ".json";
  };
  for (const char* key : {"max_depth", "online_rounds", "online_depth", "rounds"}) {
    CAPTURE(key);
    auto bad = json;
    bad["params"][key] = 1000000000;
    CHECK(load_error(write(bad, std::string("big_") + key)).place() == std::string("$.params.") + key);
  }
  auto elsewhere = json;
  elsewhere["booster"] = fs::absolute(dir + "/trees.ubj").string();
  CHECK(load_error(write(elsewhere, "booster_elsewhere")).place() == "$.booster");
  auto reversed = json;
  reversed["vocabulary"]["knobs"]["probe"] = {{"slot", 23}, {"lo", 5.0}, {"hi", 3.0}};
  CHECK(load_error(write(reversed, "knob_range")).place() == "$.vocabulary.knobs.probe.lo");
  CHECK(load_learned_model(dir + "/trees.json")->name() == "trees");
}

TEST_CASE("a checkpoint's weights or booster that is a FIFO is refused at once") {
  const std::string dir = gnn_checkpoint_dir();
  const std::string fifo_dir = scratch_dir("checkpoint_validation_fifo");
  fs::copy_file(dir + "/model.json", fifo_dir + "/model.json");
  REQUIRE(::mkfifo((fifo_dir + "/model.pt").c_str(), 0644) == 0);
  // A writer opens the FIFO if the load blocks (the old reader waited in open() forever), so a
  // regression fails here instead of hanging ctest; on a refusal it is never needed.
  testing::FifoUnblocker unblock(fifo_dir + "/model.pt");
  const InputError error = load_error(fifo_dir + "/model.json");
  CHECK(error.file() == fifo_dir + "/model.pt");
  CHECK_THAT(error.what(), Catch::Contains("FIFO"));
}
