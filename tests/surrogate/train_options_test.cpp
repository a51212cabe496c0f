#include <catch2/catch.hpp>

#include "ir/input_error.h"
#include "surrogate/gnn/train_options.h"

using namespace perftune;

namespace {
TrainOptions parse(const std::string& text) {
  const auto json = nlohmann::json::parse(text);
  return TrainOptions::from_json(JsonView(json, "train.json"));
}
}  // namespace

TEST_CASE("train options: ensemble and validation round trip through JSON") {
  const TrainOptions o = parse(R"({"ensemble": 4, "validation": "kernels", "validation_fraction": 0.25, "epochs": 7,
                                    "epoch_selection": "shared", "correction_scales": [0, 0.5, 1],
                                    "select_kernel_weight": "log_configs", "fast_share": 0.5, "fast_quantile": 0.01,
                                    "tiling_in_groups": true, "program_weight": 0.5, "programs_per_step": 3, "placements_per_program": 6})");
  REQUIRE(o.ensemble == 4);
  REQUIRE(o.validation == "kernels");
  const auto json = nlohmann::json::parse(o.to_json().dump());
  const TrainOptions back = TrainOptions::from_json(JsonView(json, "again.json"));
  REQUIRE(back.ensemble == 4);
  REQUIRE(back.validation == "kernels");
  REQUIRE(back.validation_fraction == 0.25);
  REQUIRE(back.epochs == 7);
  REQUIRE(back.epoch_selection == "shared");
  REQUIRE(back.correction_scales == std::vector<double>{0.0, 0.5, 1.0});
  REQUIRE(back.select_kernel_weight == "log_configs");
  REQUIRE(back.fast_share == 0.5);
  REQUIRE(back.fast_quantile == 0.01);
  REQUIRE(back.tiling_in_groups);
  REQUIRE(back.program_weight == 0.5);
  REQUIRE(back.programs_per_step == 3);
  REQUIRE(back.placements_per_program == 6);
  // Defaults stay out of the JSON: identities written before these options existed still match.
  const auto defaults = TrainOptions{}.to_json();
  REQUIRE_FALSE(defaults.contains("ensemble"));
  REQUIRE_FALSE(defaults.contains("validation"));
  REQUIRE_FALSE(defaults.contains("epoch_selection"));
  REQUIRE_FALSE(defaults.contains("correction_scales"));
  REQUIRE_FALSE(defaults.contains("select_kernel_weight"));
  REQUIRE_FALSE(defaults.contains("fast_share"));
  REQUIRE_FALSE(defaults.contains("fast_quantile"));
  REQUIRE_FALSE(defaults.contains("tiling_in_groups"));
  REQUIRE_FALSE(defaults.contains("program_weight"));
}

TEST_CASE("train options: bad ensemble or validation settings name the place") {
  struct Row { const char* json; const char* expected; };
  const auto row = GENERATE(Row{R"({"ensemble": 0})", "$.ensemble"}, Row{R"({"ensemble": 1000})", "at most 32"},
                            Row{R"({"validation": "configs_and_kernels"})", "\"kernels\""},
                            Row{R"({"validation": "kernels", "validation_fraction": 0})", "validation_fraction"},
                            Row{R"({"epoch_selection": "best"})", "\"shared\""},
                            Row{R"({"correction_scales": []})", "at least one factor"},
                            Row{R"({"correction_scales": [0.5, 1.5]})", "$.correction_scales[1]"},
                            Row{R"({"correction_scales": [-0.5]})", "$.correction_scales[0]"},
                            Row{R"({"select_kernel_weight": "size"})", "$.select_kernel_weight"},
                            Row{R"({"fast_share": 1.5})", "$.fast_share"},
                            Row{R"({"fast_quantile": 0})", "$.fast_quantile: a fraction in (0, 1)"},
                            Row{R"({"fast_quantile": 1})", "$.fast_quantile"},
                            Row{R"({"tiling_in_groups": 1})", "$.tiling_in_groups"},
                            Row{R"({"program_weight": -1})", "$.program_weight"},
                            Row{R"({"placements_per_program": 1})", "$.placements_per_program: at least 2"},
                            // A negative seed used to wrap silently to a huge unsigned one.
                            Row{R"({"seed": -1})", "a non-negative integer, found -1"});
  CAPTURE(row.json);
  REQUIRE_THROWS_AS(parse(row.json), InputError);
  REQUIRE_THROWS_WITH(parse(row.json), Catch::Contains("train.json") && Catch::Contains(row.expected));
}
