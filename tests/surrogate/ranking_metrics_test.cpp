#include <catch2/catch.hpp>

#include <random>

#include "surrogate/evaluation/ranking_metrics.h"

using namespace perftune;

namespace {
// Straight O(n^2) tau-b, the definition itself, to check the O(n log n) version against.
double tau_by_definition(const std::vector<double>& x, const std::vector<double>& y) {
  double concordant = 0, discordant = 0, ties_x = 0, ties_y = 0;
  for (std::size_t i = 0; i < x.size(); ++i)
    for (std::size_t j = i + 1; j < x.size(); ++j) {
      const double dx = x[i] - x[j], dy = y[i] - y[j];
      if (dx == 0 && dy == 0) continue;
      if (dx == 0) ties_x += 1;
      else if (dy == 0) ties_y += 1;
      else if ((dx > 0) == (dy > 0)) concordant += 1;
      else discordant += 1;
    }
  const double denominator = std::sqrt((concordant + discordant + ties_x) * (concordant + discordant + ties_y));
  return denominator == 0 ? 0 : (concordant - discordant) / denominator;
}
}  // namespace

TEST_CASE("kendall tau on hand-computed cases") {
  const std::vector<double> a{1, 2, 3, 4}, reversed{4, 3, 2, 1}, one_swap{1, 3, 2, 4};
  REQUIRE(kendall_tau(a, a) == Approx(1.0));
  REQUIRE(kendall_tau(a, reversed) == Approx(-1.0));
  // 6 pairs, 5 concordant, 1 discordant: (5 - 1) / 6.
  REQUIRE(kendall_tau(a, one_swap) == Approx(4.0 / 6.0));
  const std::vector<double> constant{5, 5, 5, 5};
  REQUIRE(kendall_tau(a, constant) == 0.0);
}

TEST_CASE("kendall tau-b matches the definition with ties") {
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 50; ++trial) {
    const std::size_t n = 2 + rng() % 40;
    std::vector<double> x(n), y(n);
    for (std::size_t i = 0; i < n; ++i) {
      x[i] = static_cast<double>(rng() % 6);  // few distinct values: many ties
      y[i] = static_cast<double>(rng() % 5);
    }
    CAPTURE(trial, n);
    REQUIRE(kendall_tau(x, y) == Approx(tau_by_definition(x, y)).margin(1e-12));
  }
}

TEST_CASE("top-k slowdown picks the best measured among the predicted top k") {
  const std::vector<double> measured{10, 12, 8, 20};
  const std::vector<double> predicted{1, 2, 3, 4};  // model's order: 10, 12, 8, 20
  REQUIRE(top_k_slowdown(predicted, measured, 1) == Approx(0.25));  // (10 - 8) / 8
  REQUIRE(top_k_slowdown(predicted, measured, 2) == Approx(0.25));
  REQUIRE(top_k_slowdown(predicted, measured, 3) == Approx(0.0));
  REQUIRE(top_k_slowdown(predicted, measured, 10) == Approx(0.0));
}

TEST_CASE("MAPE is the mean relative error") {
  const std::vector<double> measured{1.0, 2.0}, predicted{1.5, 1.0};
  REQUIRE(mean_absolute_percentage_error(predicted, measured) == Approx(0.5));
}

TEST_CASE("the accumulator averages over kernels") {
  RankingMetricsAccumulator accumulator;
  const std::vector<double> m1{1, 2, 3}, p1{1, 2, 3}, m2{1, 2, 3}, p2{3, 2, 1};
  accumulator.add_kernel(p1, m1, false);
  accumulator.add_kernel(p2, m2, false);
  const auto metrics = accumulator.average();
  REQUIRE(metrics.kernels == 2);
  REQUIRE(metrics.kendall_tau == Approx(0.0));
  REQUIRE(metrics.top1_slowdown == Approx(1.0));  // (0 + (3 - 1) / 1) / 2
  REQUIRE(std::isnan(metrics.mape));
}
