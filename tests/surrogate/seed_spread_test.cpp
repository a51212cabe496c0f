#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <stdexcept>

#include "surrogate/evaluation/seed_spread.h"

using namespace perftune;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

KernelRow row(const std::string& task, const std::string& kernel, double learned_tau, double learned_top1, double random_top1) {
  KernelRow r;
  r.task = task;
  r.kernel = kernel;
  r.device = "cpu";
  r.models["learned"] = {learned_tau, learned_top1, 0.0, 0.0, kNaN};
  r.models["random"] = {0.0, random_top1, 0.0, 0.0, kNaN};
  return r;
}

// Two tile kernels and one fusion program; only the learned model moves with the seed.
SeededTable table(std::uint64_t seed, double tau_a, double tau_b, double top1_a, double fusion_tau) {
  SeededTable t{seed, {}};
  t.table.models = {"learned", "random"};
  t.table.rows = {row("tile", "a", tau_a, top1_a, 2.0), row("tile", "b", tau_b, 0.5, 2.0), row("fusion", "p", fusion_tau, 0.1, 1.0)};
  return t;
}

}  // namespace

TEST_CASE("scores over training seeds: per-row means and the spread of the task averages", "[surrogate][eval]") {
  // Tile averages of learned tau: seed 1 (0.2 + 0.4) / 2 = 0.3, seed 2 0.5, seed 3 0.7: mean 0.5, sd 0.2.
  const std::vector<SeededTable> tables = {table(1, 0.2, 0.4, 1.0, 0.1), table(2, 0.4, 0.6, 3.0, 0.1), table(3, 0.6, 0.8, 2.0, 0.4)};
  const EvaluationTable mean = mean_over_seeds(tables);
  REQUIRE(mean.rows.size() == 3);
  CHECK(mean.rows[0].models.at("learned").kendall_tau == Approx(0.4));
  CHECK(mean.rows[0].models.at("learned").top1_slowdown == Approx(2.0));
  CHECK(mean.rows[1].models.at("learned").kendall_tau == Approx(0.6));
  CHECK(mean.rows[2].models.at("learned").kendall_tau == Approx(0.2));
  CHECK(std::isnan(mean.rows[0].models.at("learned").mape));  // NaN on every seed stays n/a
  CHECK(mean.averages("tile").at("learned").kendall_tau == Approx(0.5));

  const auto spread = spread_over_seeds(tables);
  CHECK(spread.at("tile").at("learned").kendall_tau == Approx(0.2));
  // Top-1 tile averages per seed: (1 + 0.5) / 2 = 0.75, 1.75, 1.25: sd 0.5.
  CHECK(spread.at("tile").at("learned").top1_slowdown == Approx(0.5));
  CHECK(spread.at("tile").at("random").top1_slowdown == Approx(0.0));
  // Fusion tau 0.1, 0.1, 0.4: mean 0.2, sd sqrt((0.01 + 0.01 + 0.04) / 2).
  CHECK(spread.at("fusion").at("learned").kendall_tau == Approx(std::sqrt(0.03)));

  const std::string text = format_seed_spread(tables);
  CHECK(text.find("over 3 training seeds (1, 2, 3)") != std::string::npos);
  CHECK(text.find("fusion task") != std::string::npos);
  const nlohmann::ordered_json json = seed_spread_json(tables);
  CHECK(json["seeds"] == nlohmann::json({1, 2, 3}));
  CHECK(json["spread"]["tile"]["learned"]["kendall_tau"].get<double>() == Approx(0.2));
  CHECK(json["spread"]["tile"]["learned"]["mape"].is_null());
  REQUIRE(json["per_seed"].size() == 3);
  CHECK(json["per_seed"][2]["tasks"]["tile"]["learned"]["kendall_tau"].get<double>() == Approx(0.7));
}

TEST_CASE("scores over one seed have no spread; tables of other rows are refused", "[surrogate][eval]") {
  const std::vector<SeededTable> one = {table(5, 0.2, 0.4, 1.0, 0.1)};
  CHECK(mean_over_seeds(one).rows[0].models.at("learned").kendall_tau == Approx(0.2));
  CHECK(std::isnan(spread_over_seeds(one).at("tile").at("learned").kendall_tau));

  std::vector<SeededTable> other = {table(1, 0.2, 0.4, 1.0, 0.1), table(2, 0.2, 0.4, 1.0, 0.1)};
  other[1].table.rows[1].kernel = "c";
  CHECK_THROWS_WITH(mean_over_seeds(other), Catch::Contains("seed 2 scored other rows or models than seed 1"));
  CHECK_THROWS_AS(spread_over_seeds({}), std::invalid_argument);
}
