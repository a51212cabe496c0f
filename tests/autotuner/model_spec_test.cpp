#include "autotuner/factories/model_spec.h"

#include <catch2/catch.hpp>

#include "ir/input_error.h"

namespace perftune {
namespace {

std::string beside_campaign(const std::string& path) { return "/campaigns/" + path; }

ModelSpec parse(const std::string& text) {
  const nlohmann::json json = nlohmann::json::parse(text);
  return parse_model_spec(JsonView(json, "campaign.json", "$.model"), beside_campaign);
}

TEST_CASE("a model spec resolves its paths against the campaign") {
  const ModelSpec learned = parse(R"({"type": "learned", "params": "m.json", "seed": 7})");
  CHECK(learned.type == "learned");
  CHECK(learned.params == "/campaigns/m.json");
  CHECK(learned.checkpoint.empty());
  CHECK(learned.seed == 7);
  const ModelSpec analytical = parse(R"({"type": "analytical"})");
  CHECK(analytical.device.empty());
  CHECK(analytical.hardware_dir == "/campaigns/../hardware");
  CHECK(parse(R"({"type": "none"})").type == "none");
}

TEST_CASE("a learned model may be corrected by a residual on the target's measurements") {
  const ModelSpec plain = parse(R"({"type": "learned", "checkpoint": "m.json"})");
  CHECK_FALSE(plain.residual);
  const ModelSpec frozen = parse(R"({"type": "learned", "checkpoint": "m.json", "residual": {}})");
  CHECK(frozen.residual);
  CHECK_FALSE(frozen.residual_options.model.fine_tune_prior);
  const ModelSpec tuned =
      parse(R"({"type": "learned", "params": "p.json", "residual": {"fine_tune_prior": true, "exploration": 1.5}})");
  CHECK(tuned.residual);
  CHECK(tuned.residual_options.model.fine_tune_prior);
  CHECK(tuned.residual_options.model.exploration == 1.5);
  CHECK(frozen.residual_options.model.exploration == 0.0);
  CHECK(frozen.residual_options.batch.batch == BatchChoice::kTop);
  const ModelSpec thompson = parse(
      R"({"type": "learned", "checkpoint": "m.json", "residual": {"batch": "thompson", "batch_pool": 4, "source_favourites": 12}})");
  CHECK(thompson.residual_options.batch.batch == BatchChoice::kThompson);
  CHECK(thompson.residual_options.batch.batch_pool == 4);
  CHECK(thompson.residual_options.batch.source_favourites == 12);
  CHECK_FALSE(thompson.residual_options.model.sample_residual);
  CHECK(parse(R"({"type": "learned", "checkpoint": "m.json", "residual": {"batch": "thompson", "sample_residual": true}})")
            .residual_options.model.sample_residual);
  const ModelSpec local = parse(R"({"type": "learned", "checkpoint": "m.json", "residual": {"batch": "thompson",
      "incumbent_neighbours": 3, "local_slots": 2, "relevance": true}})");
  CHECK(local.residual_options.batch.incumbent_neighbours == 3);
  CHECK(local.residual_options.batch.local_slots == 2);
  CHECK(local.residual_options.model.relevance);
  CHECK_FALSE(thompson.residual_options.model.relevance);
  CHECK(thompson.residual_options.batch.local_slots == 0);
  CHECK_FALSE(local.residual_options.model.categorical);
  CHECK(parse(R"({"type": "learned", "checkpoint": "m.json", "residual": {"relevance": true, "categorical": true}})")
            .residual_options.model.categorical);
  // The tuner's batch policy: the residual's, and a space-filling start for a Gaussian process alone.
  CHECK(batch_policy_options(thompson).batch == BatchChoice::kThompson);
  CHECK(batch_policy_options(thompson).batch_pool == 4);
  CHECK(batch_policy_options(plain).batch == BatchChoice::kTop);
  CHECK_FALSE(batch_policy_options(thompson).space_filling_start);
  CHECK(batch_policy_options(parse(R"({"type": "gaussian_process", "residual": {}})")).space_filling_start);
}

TEST_CASE("several checkpoints are the priors of one residual, each resolved against the campaign") {
  const ModelSpec several = parse(R"({"type": "learned", "checkpoints": ["a.json", "b.json"], "residual": {}})");
  CHECK(several.checkpoint.empty());
  CHECK(several.checkpoints == std::vector<std::string>{"/campaigns/a.json", "/campaigns/b.json"});
  CHECK(several.residual);
  CHECK(parse(R"({"type": "learned", "checkpoint": "m.json"})").checkpoints.empty());
  const ModelSpec recorded = parse(R"({"type": "recorded", "sources": ["a.json.gz", "b.json.gz"], "residual": {}})");
  CHECK(recorded.recordings == std::vector<std::string>{"/campaigns/a.json.gz", "/campaigns/b.json.gz"});
  CHECK(recorded.residual);
}

TEST_CASE("a bad model spec names its JSON path and what was expected") {
  const auto [text, place, expected] = GENERATE(table<std::string, std::string, std::string>({
      {R"({"type": "gnn"})", "$.model.type", "\"none\", \"analytical\", \"learned\""},
      {R"({"kind": "none"})", "$.model", "type"},
      {R"({"type": "none", "device": "x.json"})", "$.model", "device"},
      {R"({"type": "learned", "seed": 3})", "$.model.seed", "the shipped model is trained already"},
      {R"({"type": "learned", "checkpoint": "a", "params": "b"})", "$.model", "at most one of"},
      {R"({"type": "learned", "checkpoint": "a", "checkpoints": ["b"], "residual": {}})", "$.model", "at most one of"},
      {R"({"type": "learned", "checkpoints": ["a", "b"]})", "$.model.checkpoints", "a \"residual\" beside it"},
      {R"({"type": "learned", "checkpoints": [], "residual": {}})", "$.model.checkpoints", "at least one"},
      {R"({"type": "learned", "checkpoints": "a", "residual": {}})", "$.model.checkpoints", "array"},
      {R"({"type": "learned", "checkpoints": ["a", 3], "residual": {}})", "$.model.checkpoints[1]", "string"},
      {R"({"type": "recorded"})", "$.model", "sources"},
      {R"({"type": "recorded", "sources": []})", "$.model.sources", "at least one"},
      {R"({"type": "recorded", "sources": ["a", "b"]})", "$.model.sources", "a \"residual\" beside it"},
      {R"({"type": "recorded", "sources": ["a"], "seed": 1})", "$.model", "seed"},
      {R"({"type": "analytical", "device": 3})", "$.model.device", "string"},
      {R"({"type": "learned", "params": "m.json", "seed": "one"})", "$.model.seed", "integer"},
      {R"({"type": "learned", "params": "m.json", "seed": -1})", "$.model.seed", "a non-negative integer, found -1"},
      {R"({"type": "learned", "params": "m.json", "residual": true})", "$.model.residual", "an object"},
      {R"({"type": "learned", "params": "m.json", "residual": {"fine_tune": true}})", "$.model.residual", "fine_tune"},
      {R"({"type": "learned", "params": "m.json", "residual": {"fine_tune_prior": 1}})",
       "$.model.residual.fine_tune_prior", "true or false"},
      {R"({"type": "analytical", "residual": {}})", "$.model", "residual"},
      {R"({"type": "learned", "params": "m.json", "residual": {"exploration": -1}})", "$.model.residual.exploration",
       "non-negative"},
      {R"({"type": "learned", "params": "m.json", "residual": {"batch": "diverse"}})", "$.model.residual.batch", "\"thompson\""},
      {R"({"type": "learned", "params": "m.json", "residual": {"batch": 2}})", "$.model.residual.batch", "string"},
      {R"({"type": "learned", "params": "m.json", "residual": {"batch_pool": 4}})", "$.model.residual.batch_pool",
       "unless \"batch\" is \"thompson\""},
      {R"({"type": "learned", "params": "m.json", "residual": {"batch": "top", "source_favourites": 4}})",
       "$.model.residual.source_favourites", "unless \"batch\" is \"thompson\""},
      {R"({"type": "learned", "params": "m.json", "residual": {"sample_residual": true}})", "$.model.residual.sample_residual",
       "unless \"batch\" is \"thompson\""},
      {R"({"type": "learned", "params": "m.json", "residual": {"batch": "thompson", "sample_residual": 1}})",
       "$.model.residual.sample_residual", "true or false"},
      {R"({"type": "learned", "params": "m.json", "residual": {"batch": "thompson", "batch_pool": 0}})",
       "$.model.residual.batch_pool", "positive"},
      {R"({"type": "learned", "params": "m.json", "residual": {"batch": "thompson", "source_favourites": -1}})",
       "$.model.residual.source_favourites", ">= 0"},
      {R"({"type": "learned", "params": "m.json", "residual": {"incumbent_neighbours": 1}})",
       "$.model.residual.incumbent_neighbours", "unless \"batch\" is \"thompson\""},
      {R"({"type": "learned", "params": "m.json", "residual": {"batch": "thompson", "incumbent_neighbours": -2}})",
       "$.model.residual.incumbent_neighbours", ">= 0"},
      {R"({"type": "learned", "params": "m.json", "residual": {"batch": "thompson", "local_slots": 2}})",
       "$.model.residual.local_slots", "incumbent_neighbours"},
      {R"({"type": "learned", "params": "m.json", "residual": {"relevance": "yes"}})", "$.model.residual.relevance",
       "true or false"},
      {R"({"type": "learned", "params": "m.json", "residual": {"categorical": true}})", "$.model.residual.categorical",
       "without \"relevance\""},
  }));
  CAPTURE(text);
  CHECK_THROWS_AS(parse(text), InputError);
  CHECK_THROWS_WITH(parse(text), Catch::Contains("campaign.json") && Catch::Contains(place) && Catch::Contains(expected));
}

}  // namespace
}  // namespace perftune
