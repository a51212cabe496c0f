#include <filesystem>
#include <fstream>

#include <catch2/catch.hpp>

#include "ir/input_error.h"
#include "surrogate/analytical/analytical_model.h"
#include "surrogate/learned_model.h"
#include "surrogate/training/trainer.h"
#include "synthetic_kernels.h"
#include "test_support.h"

using namespace perftune;

namespace {

GnnParams tiny_params(const std::string& join) { return testing::small_gnn_params(16, 8, join); }

std::vector<Config> all_configs(const MeasuredKernel& k) {
  std::vector<Config> configs;
  for (const auto& m : k.measurements) configs.push_back(m.config);
  return configs;
}

std::unique_ptr<GnnCostModel> briefly_trained(const std::vector<MeasuredKernel>& corpus, const std::string& join,
                                              int ensemble = 1) {
  TrainOptions options;
  options.epochs = 2;
  options.steps_per_epoch = 5;
  options.configs_per_kernel = 8;
  options.ensemble = ensemble;
  return train_gnn(testing::pointers(corpus), {}, tiny_params(join), options, nullptr);
}

}  // namespace

TEST_CASE("a checkpoint round trip predicts identically") {
  const std::string join = GENERATE("late", "early");
  const int ensemble = GENERATE(1, 3);
  CAPTURE(join, ensemble);
  const auto corpus = testing::synthetic_corpus(3, 2);
  auto model = briefly_trained(corpus, join, ensemble);
  const std::string name = "gnn_checkpoint_" + join + std::to_string(ensemble);
  const std::string path = scratch_dir(name) + "/model.json";
  model->save(path, {{"note", "test"}});
  REQUIRE(std::filesystem::exists(scratch_dir("unused") + "/../" + name + "/model.pt"));
  auto loaded = GnnCostModel::load(path);
  REQUIRE(loaded->ensemble_size() == static_cast<std::size_t>(ensemble));
  const auto& k = corpus[0];
  const auto configs = all_configs(k);
  std::vector<float> a(configs.size()), b(configs.size());
  model->predict(k.kernel, *k.space, configs, a);
  loaded->predict(k.kernel, *k.space, configs, b);
  REQUIRE(a == b);
  for (std::size_t m = 0; m < loaded->ensemble_size(); ++m) {
    model->predict_member(m, k.kernel, *k.space, configs, a);
    loaded->predict_member(m, k.kernel, *k.space, configs, b);
    REQUIRE(a == b);
  }
}

TEST_CASE("an ensemble checkpoint whose weights lack a member, or a single model's weights, is refused") {
  const auto corpus = testing::synthetic_corpus(2, 6);
  const std::string dir = scratch_dir("gnn_checkpoint_ensemble_bad");
  briefly_trained(corpus, "late", 2)->save(dir + "/pair.json");
  briefly_trained(corpus, "late", 1)->save(dir + "/single.json");
  auto json = nlohmann::json::parse(std::ifstream(dir + "/pair.json"));
  json["train"]["ensemble"] = 3;  // the file holds member0 and member1 only
  std::ofstream(dir + "/three.json") << json.dump();
  REQUIRE_THROWS_WITH(GnnCostModel::load(dir + "/three.json"), Catch::Contains("pair.pt") && Catch::Contains("member2"));
  json["weights"] = "single.pt";  // top-level parameters, no member archives
  json["train"]["ensemble"] = 2;
  std::ofstream(dir + "/mixed.json") << json.dump();
  REQUIRE_THROWS_WITH(GnnCostModel::load(dir + "/mixed.json"), Catch::Contains("single.pt") && Catch::Contains("member0"));
  // The one-member checkpoint is the pre-ensemble format: its JSON has no "ensemble" key.
  const auto single = nlohmann::json::parse(std::ifstream(dir + "/single.json"));
  REQUIRE_FALSE(single["train"].contains("ensemble"));
  REQUIRE(GnnCostModel::load(dir + "/single.json")->ensemble_size() == 1);
}

TEST_CASE("a checkpoint with another schema version or a renamed parameter is refused") {
  const auto corpus = testing::synthetic_corpus(2, 4);
  auto model = briefly_trained(corpus, "late");
  const std::string dir = scratch_dir("gnn_checkpoint_bad");
  model->save(dir + "/model.json");
  auto json = nlohmann::json::parse(std::ifstream(dir + "/model.json"));

  auto wrong_version = json;
  wrong_version["feature_schema_version"] = kFeatureSchemaVersion + 1;
  std::ofstream(dir + "/wrong_version.json") << wrong_version.dump();
  std::filesystem::copy_file(dir + "/model.pt", dir + "/wrong_version.pt");
  REQUIRE_THROWS_WITH(load_learned_model(dir + "/wrong_version.json"),
                      Catch::Contains("wrong_version.json") && Catch::Contains("feature schema version"));

  // Weights saved by a model with more layers: the hyper-parameters say 2, the file has sage.2.
  auto renamed = json;
  renamed["params"]["layers"] = 3;
  renamed["weights"] = "model.pt";
  std::ofstream(dir + "/more_layers.json") << renamed.dump();
  REQUIRE_THROWS_WITH(load_learned_model(dir + "/more_layers.json"), Catch::Contains("model.pt") && Catch::Contains("sage"));

  auto wider = json;
  wider["params"]["hidden"] = 24;
  std::ofstream(dir + "/wider.json") << wider.dump();
  REQUIRE_THROWS_WITH(load_learned_model(dir + "/wider.json"), Catch::Contains("model.pt"));
}

TEST_CASE("online update lowers the loss on the updated kernel, from scratch") {
  const auto kernel = testing::measured_kernel("online", 256, 256, 128, 3);
  auto model = make_online_learned_model("", 3);
  auto* gnn = dynamic_cast<GnnCostModel*>(model.get());
  REQUIRE(gnn != nullptr);
  const double before = gnn->loss(kernel.kernel, *kernel.space, kernel.measurements);
  for (int round = 0; round < 12; ++round) model->update(kernel.kernel, *kernel.space, kernel.measurements);
  const double after = gnn->loss(kernel.kernel, *kernel.space, kernel.measurements);
  CAPTURE(before, after);
  REQUIRE(after < 0.8 * before);
  REQUIRE(gnn->vocabulary().opcode_id("dot") > 0);  // the vocabulary grew online
}

TEST_CASE("online update fine-tunes every member of an ensemble") {
  const auto corpus = testing::synthetic_corpus(3, 12);
  auto model = briefly_trained(corpus, "late", 2);
  const auto& k = corpus[2];
  const auto configs = all_configs(k);
  std::vector<std::vector<float>> before(2, std::vector<float>(configs.size())), after = before;
  for (std::size_t m = 0; m < 2; ++m) model->predict_member(m, k.kernel, *k.space, configs, before[m]);
  model->update(k.kernel, *k.space, k.measurements);
  for (std::size_t m = 0; m < 2; ++m) {
    model->predict_member(m, k.kernel, *k.space, configs, after[m]);
    CAPTURE(m);
    REQUIRE(after[m] != before[m]);
  }
}

TEST_CASE("batched prediction equals one-by-one prediction") {
  const std::string join = GENERATE("late", "early");
  CAPTURE(join);
  const auto corpus = testing::synthetic_corpus(2, 8);
  auto model = briefly_trained(corpus, join);
  const auto& k = corpus[1];
  const auto configs = all_configs(k);
  std::vector<float> batched(configs.size());
  model->predict(k.kernel, *k.space, configs, batched);
  for (std::size_t i = 0; i < configs.size(); i += 7) {
    float single = 0;
    model->predict(k.kernel, *k.space, std::span<const Config>(&configs[i], 1), std::span<float>(&single, 1));
    REQUIRE(single == Approx(batched[i]).epsilon(1e-5));
  }
}

TEST_CASE("an untrained hybrid model ranks exactly as the analytical model, and a trained one survives a checkpoint") {
  const auto corpus = testing::synthetic_corpus(3, 5);
  GnnParams params = tiny_params("late");
  params.analytical_feature = true;
  REQUIRE_THROWS_WITH(GnnCostModel(params, FeatureVocabulary{}, TrainOptions{}), Catch::Contains("device spec"));
  params.analytical_device = testing::small_device(false);
  AnalyticalModel analytical(*params.analytical_device);
  const auto& k = corpus[1];
  const auto configs = all_configs(k);
  std::vector<float> hybrid(configs.size()), roofline(configs.size());
  GnnCostModel untrained(params, FeatureVocabulary::build(testing::pointers(corpus), 1), TrainOptions{});
  untrained.predict(k.kernel, *k.space, configs, hybrid);
  analytical.predict(k.kernel, *k.space, configs, roofline);
  for (std::size_t i = 0; i < configs.size(); ++i) REQUIRE(hybrid[i] == Approx(roofline[i]).margin(1e-4));

  TrainOptions options;
  options.epochs = 2;
  options.steps_per_epoch = 5;
  options.configs_per_kernel = 8;
  auto trained = train_gnn(testing::pointers(corpus), {}, params, options, nullptr);
  const std::string path = scratch_dir("gnn_checkpoint_hybrid") + "/model.json";
  trained->save(path);
  auto loaded = GnnCostModel::load(path);
  REQUIRE(loaded->params().analytical_feature);
  REQUIRE(loaded->params().analytical_device.has_value());
  REQUIRE(loaded->params().analytical_device->onchip_bytes == params.analytical_device->onchip_bytes);
  std::vector<float> a(configs.size()), b(configs.size());
  trained->predict(k.kernel, *k.space, configs, a);
  loaded->predict(k.kernel, *k.space, configs, b);
  REQUIRE(a == b);
}

TEST_CASE("a file given as a checkpoint that is none says a checkpoint was expected") {
  const std::string dir = scratch_dir("gnn_not_a_checkpoint");
  const std::string campaign = dir + "/campaign.json";
  std::ofstream(campaign) << R"({"name": "a campaign", "source": {"path": "x.json.gz"}})";
  const std::string weights = dir + "/model.pt";
  std::ofstream(weights, std::ios::binary) << std::string("PK\x03\x04\x00\x00binary", 12);
  for (const std::string& path : {campaign, weights}) {
    CAPTURE(path);
    REQUIRE_THROWS_WITH(GnnCostModel::load(path), Catch::Contains(path + ": ") && Catch::Contains("a model checkpoint"));
  }
}
