#include "autotuner/factories/model_factory.h"

#include <catch2/catch.hpp>

#include "ir/input_error.h"
#include "test_support.h"

namespace perftune {
namespace {

std::string in_hardware_configs(const std::string& path) { return source_path("configs/hardware/" + path); }

TEST_CASE("a campaign's analytical model reads its device spec") {
  const nlohmann::json json = nlohmann::json::parse(R"({"type": "analytical", "device": "tpu_v3.json"})");
  const ModelSpec spec = parse_model_spec(JsonView(json, "campaign.json", "$.model"), in_hardware_configs);
  CHECK(spec.device == in_hardware_configs("tpu_v3.json"));
  const std::unique_ptr<CostModel> model = make_model(spec);
  REQUIRE(model != nullptr);
  CHECK(model->name() == "analytical");
}

TEST_CASE("without a device spec the source's device picks the shipped one") {
  const nlohmann::json json = nlohmann::json::parse(R"({"type": "analytical"})");
  // Campaigns live in configs/campaigns, so "../hardware" from there is configs/hardware.
  const ModelSpec spec = parse_model_spec(JsonView(json, "campaign.json", "$.model"), [](const std::string& path) {
    return source_path("configs/campaigns/" + path);
  });
  CHECK(make_model(spec, "tpu")->name() == "analytical");
  CHECK_THROWS_WITH(make_model(spec, "gpu:TITAN_RTX"), Catch::Contains("$.model") && Catch::Contains("device"));
}

TEST_CASE("an analytical model without a usable device spec names the problem") {
  SECTION("a device file that does not exist") {
    const nlohmann::json json = nlohmann::json::parse(R"({"type": "analytical", "device": "tpu_v9.json"})");
    const ModelSpec spec = parse_model_spec(JsonView(json, "campaign.json", "$.model"), in_hardware_configs);
    CHECK_THROWS_AS(make_model(spec), InputError);
    CHECK_THROWS_WITH(make_model(spec), Catch::Contains("campaign.json: $.model.device") && Catch::Contains("tpu_v9.json"));
  }
}

TEST_CASE("a model whose priors cannot be loaded names which one") {
  const auto [text, place, expected] = GENERATE(table<std::string, std::string, std::string>({
      {R"({"type": "learned", "checkpoints": ["a.json", "missing.json"], "residual": {}})", "$.model.checkpoints[0]",
       "does not exist"},
      {R"({"type": "recorded", "sources": ["missing.json.gz"], "residual": {}})", "$.model.sources[0]", "does not exist"},
  }));
  CAPTURE(text);
  const nlohmann::json json = nlohmann::json::parse(text);
  const ModelSpec spec = parse_model_spec(JsonView(json, "campaign.json", "$.model"),
                                          [](const std::string& path) { return "/nonexistent/" + path; });
  CHECK_THROWS_AS(make_model(spec), InputError);
  CHECK_THROWS_WITH(make_model(spec), Catch::Contains("campaign.json") && Catch::Contains(place) && Catch::Contains(expected));
}

}  // namespace
}  // namespace perftune
