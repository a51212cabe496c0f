#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>

#include <catch2/catch.hpp>

#include "ir/input_error.h"
#include "surrogate/evaluation/ranking_metrics.h"
#include "surrogate/learned_model.h"
#include "surrogate/trees/schedule_features.h"
#include "surrogate/trees/tree_labels.h"
#include "surrogate/trees/tree_training.h"
#include "synthetic_kernels.h"
#include "test_support.h"

using namespace perftune;

namespace {

TreeParams quick_params() {
  TreeParams params;
  params.rounds = 60;
  params.max_depth = 4;
  params.min_opcode_count = 1;
  params.threads = 1;
  return params;
}

std::vector<const MeasuredKernel*> pointers(const std::vector<MeasuredKernel>& kernels) {
  std::vector<const MeasuredKernel*> out;
  for (const MeasuredKernel& k : kernels) out.push_back(&k);
  return out;
}

struct Scored {
  std::vector<Config> configs;
  std::vector<double> measured;
  std::vector<float> predicted;
};

Scored score(CostModel& model, const MeasuredKernel& k) {
  Scored s;
  for (const Measurement& m : k.measurements)
    if (m.result.ok()) {
      s.configs.push_back(m.config);
      s.measured.push_back(m.result.seconds);
    }
  s.predicted.resize(s.configs.size());
  model.predict(k.kernel, *k.space, s.configs, s.predicted);
  return s;
}

double tau(CostModel& model, const MeasuredKernel& k) {
  const Scored s = score(model, k);
  return kendall_tau(std::vector<double>(s.predicted.begin(), s.predicted.end()), s.measured);
}

}  // namespace

TEST_CASE("tree labels grade configs by rank for a ranking objective and centre log seconds for a regression") {
  const std::vector<double> seconds{2.0, 1.0, 4.0, 1.0};
  const auto grades = tree_labels("rank:pairwise", seconds);
  REQUIRE(grades == std::vector<float>{10.0f * 1 / 3, 10.0f, 0.0f, 10.0f});  // ties share the better rank
  CHECK(higher_is_faster("rank:pairwise"));
  const auto centred = tree_labels("reg:squarederror", seconds);
  CHECK_FALSE(higher_is_faster("reg:squarederror"));
  double sum = 0;
  for (float v : centred) sum += v;
  CHECK(std::abs(sum) < 1e-5);
  CHECK(centred[2] - centred[1] == Approx(std::log(4.0)));
}

TEST_CASE("tree parameters round-trip through JSON and reject bad values by place") {
  TreeParams params = quick_params();
  params.objective = "reg:squarederror";
  params.online_rounds = 0;
  const nlohmann::json json = params.to_json();
  const TreeParams back = TreeParams::from_json(JsonView(json, "trees.json"));
  CHECK(back.to_json() == params.to_json());
  struct Row { const char* text; const char* where; };
  const auto row = GENERATE(Row{R"({"objective": "rank:map"})", "$.objective"}, Row{R"({"eta": 0})", "$.eta"},
                            Row{R"({"subsample": 1.5})", "$.subsample"}, Row{R"({"rounds": 0})", "$.rounds"},
                            Row{R"({"depth": 3})", "$"});
  CAPTURE(row.text);
  const nlohmann::json bad = nlohmann::json::parse(row.text);
  REQUIRE_THROWS_WITH(TreeParams::from_json(JsonView(bad, "trees.json")),
                      Catch::Contains("trees.json") && Catch::Contains(row.where));
}

TEST_CASE("the tree model learns a known tile ranking on kernels it never saw, the same for a fixed seed") {
  const auto train = testing::synthetic_corpus(8, 3);
  const auto test = testing::synthetic_corpus(4, 99);
  TreeTrainReport report;
  auto model = train_trees(pointers(train), quick_params(), nullptr, &report);
  CHECK(report.kernels == train.size());
  CHECK(report.rows == 8 * 36 - 3 * 2);  // every third kernel has 2 failed configs
  CHECK(model->name() == "trees");
  CHECK_FALSE(model->predicts_absolute_time());
  for (const MeasuredKernel& k : test) {
    CAPTURE(k.kernel.name());
    CHECK(tau(*model, k) > 0.6);
  }
  auto again = train_trees(pointers(train), quick_params(), nullptr);
  REQUIRE(score(*again, test[0]).predicted == score(*model, test[0]).predicted);
  REQUIRE_THROWS_AS(train_trees({}, quick_params(), nullptr), std::invalid_argument);
}

TEST_CASE("a trees checkpoint loads as the learned model and predicts exactly as the model saved") {
  const std::string dir = scratch_dir("trees_checkpoint");
  const auto train = testing::synthetic_corpus(5, 4);
  auto model = train_trees(pointers(train), quick_params(), nullptr);
  model->save(dir + "/trees.json", {{"note", "test"}});
  REQUIRE(std::filesystem::exists(dir + "/trees.ubj"));
  auto loaded = load_learned_model(dir + "/trees.json");
  REQUIRE(loaded->name() == "trees");
  REQUIRE(score(*loaded, train[1]).predicted == score(*model, train[1]).predicted);

  SECTION("another feature schema is refused, naming the file and the key") {
    nlohmann::json json = nlohmann::json::parse(std::ifstream(dir + "/trees.json"));
    json["feature_schema_version"] = 1;
    std::ofstream(dir + "/old.json") << json.dump();
    REQUIRE_THROWS_WITH(load_learned_model(dir + "/old.json"),
                        Catch::Contains("old.json") && Catch::Contains("feature_schema_version"));
  }
  SECTION("a missing or foreign booster file is refused, naming it") {
    nlohmann::json json = nlohmann::json::parse(std::ifstream(dir + "/trees.json"));
    json["booster"] = "nowhere.ubj";
    std::ofstream(dir + "/lost.json") << json.dump();
    REQUIRE_THROWS_WITH(load_learned_model(dir + "/lost.json"), Catch::Contains("nowhere.ubj"));
    json["booster"] = "garbage.ubj";
    std::ofstream(dir + "/garbage.ubj") << "not a model";
    std::ofstream(dir + "/garbage.json") << json.dump();
    REQUIRE_THROWS_AS(load_learned_model(dir + "/garbage.json"), InputError);
  }
}

TEST_CASE("online trees learn the target's own law on top of the pre-trained ranking") {
  auto model = train_trees(pointers(testing::synthetic_corpus(6, 5)), quick_params(), nullptr);
  // A target whose law is the corpus's reversed: the pre-trained ranking is wrong there.
  MeasuredKernel target = testing::measured_kernel("target", 512, 512, 256);
  for (Measurement& m : target.measurements) m.result = MeasureResult::from_repeats({1.0 / m.result.seconds}, 0.0);
  const double before = tau(*model, target);
  REQUIRE(before < 0.0);
  // Fewer than 4 measurements leave the ranking as it is.
  model->update(target.kernel, *target.space, std::span(target.measurements).first(3));
  CHECK(tau(*model, target) == before);
  model->update(target.kernel, *target.space, std::span(target.measurements).subspan(3));
  CHECK(tau(*model, target) > 0.5);
  // Other kernels keep the pre-trained ranking.
  const MeasuredKernel other = testing::measured_kernel("other", 256, 512, 128);
  CHECK(tau(*model, other) > 0.6);
}

namespace {

// What a backend would say a config compiles to: here its first knob, and a column it never knows.
class FirstKnobSource : public ScheduleFeatureSource {
 public:
  std::size_t width() const override { return 2; }
  void rows(const Kernel&, const SearchSpace&, std::span<const Config> configs, std::span<float> out) override {
    for (std::size_t i = 0; i < configs.size(); ++i) {
      out[2 * i] = static_cast<float>(configs[i].values.at(0));
      out[2 * i + 1] = std::numeric_limits<float>::quiet_NaN();
    }
    configs_seen += configs.size();
  }
  std::size_t configs_seen = 0;
};

}  // namespace

TEST_CASE("schedule features join the trees' rows by the name the program provides, in training and from a checkpoint") {
  auto source = std::make_shared<FirstKnobSource>();
  provide_schedule_features("test_first_knob", [source] { return source; });
  const auto train = testing::synthetic_corpus(6, 7);
  TreeParams params = quick_params();
  params.schedule_features = "test_first_knob";
  params.max_configs_per_kernel = 10;
  TreeTrainReport report;
  auto model = train_trees(pointers(train), params, nullptr, &report);
  CHECK(report.rows == 6 * 10);  // each kernel's configs drawn down to 10
  CHECK(source->configs_seen == 6 * 10);
  TreeTrainReport plain_report;
  train_trees(pointers(train), quick_params(), nullptr, &plain_report);
  CHECK(report.features == plain_report.features + 2);

  const std::string dir = scratch_dir("trees_schedule_features");
  model->save(dir + "/trees.json");
  auto loaded = load_learned_model(dir + "/trees.json");
  REQUIRE(score(*loaded, train[0]).predicted == score(*model, train[0]).predicted);

  SECTION("a checkpoint naming features this program does not provide is refused, naming the file and the key") {
    nlohmann::json json = nlohmann::json::parse(std::ifstream(dir + "/trees.json"));
    json["params"]["schedule_features"] = "test_not_provided";
    std::ofstream(dir + "/foreign.json") << json.dump();
    REQUIRE_THROWS_WITH(load_learned_model(dir + "/foreign.json"), Catch::Contains("foreign.json") &&
                                                                     Catch::Contains("schedule_features") &&
                                                                     Catch::Contains("test_first_knob"));
  }
}
