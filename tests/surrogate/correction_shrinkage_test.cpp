#include "surrogate/gnn/correction_shrinkage.h"

#include <cmath>
#include <stdexcept>

#include <catch2/catch.hpp>

using namespace perftune;

namespace {

std::vector<double> logs(const std::vector<double>& seconds) {
  std::vector<double> out;
  for (double s : seconds) out.push_back(std::log(s));
  return out;
}

}  // namespace

TEST_CASE("shrinking blends the correction: factor 0 is the analytical model, factor 1 the learned one") {
  const std::vector<double> analytical{1.0, 2.0, 3.0}, learned{3.0, 1.0, 0.0};
  const auto scale = GENERATE(0.0, 0.25, 0.5, 1.0);
  CAPTURE(scale);
  const auto blended = shrink(analytical, learned, scale);
  for (std::size_t i = 0; i < analytical.size(); ++i)
    REQUIRE(blended[i] == Approx(analytical[i] + scale * (learned[i] - analytical[i])));
  if (scale == 0.0) REQUIRE(blended == analytical);
  if (scale == 1.0) REQUIRE(blended == learned);
  REQUIRE_THROWS_AS(shrink(analytical, std::vector<double>{1.0}, scale), std::invalid_argument);
}

TEST_CASE("the factor and candidate with the best pooled validation score are chosen") {
  // Two kernels. Measured order: config 0 fastest. The analytical model picks config 1 on kernel A
  // (a 50% slower config) and is right on kernel B; candidate 1's correction fixes A without
  // breaking B when shrunk to half, but reverses B at full strength. Candidate 0 is a wrong correction.
  ShrinkageKernel a{{1.0, 1.5, 3.0}, logs({2.0, 1.8, 3.0}), {logs({4.0, 1.0, 1.0}), logs({1.0, 2.0, 3.0})}};
  ShrinkageKernel b{{1.0, 1.2, 2.0}, logs({1.0, 1.1, 2.0}), {logs({1.0, 1.1, 2.0}), logs({1.0, 0.95, 2.0})}};
  struct Row {
    double top1_weight;
    std::size_t candidate;
    double scale;
  };
  // tau alone (weight 0) and top-1 first (weight 10) agree here: half of candidate 1's correction.
  const auto row = GENERATE(Row{0.0, 1, 0.5}, Row{10.0, 1, 0.5});
  CAPTURE(row.top1_weight);
  const std::vector<ShrinkageKernel> kernels{a, b};
  const std::vector<double> scales{1.0, 0.5, 0.0};  // any order
  const ShrinkageChoice choice = choose_shrinkage(kernels, scales, row.top1_weight);
  CAPTURE(choice.candidate, choice.scale, choice.tau, choice.top1);
  REQUIRE(choice.candidate == row.candidate);
  REQUIRE(choice.scale == row.scale);
  REQUIRE(choice.top1 == 0.0);
  REQUIRE(choice.tau == Approx(1.0));
  REQUIRE(choice.score == Approx(choice.tau - row.top1_weight * choice.top1));
}

TEST_CASE("without a better correction the choice stays at the analytical model") {
  // Every candidate's correction only reorders configs the measurement ranks the same as the
  // analytical model does, or makes things worse: ties go to factor 0.
  ShrinkageKernel k{{1.0, 2.0, 3.0}, logs({1.0, 2.0, 3.0}), {logs({3.0, 2.0, 1.0}), logs({1.0, 2.0, 3.0})}};
  const std::vector<ShrinkageKernel> kernels{k};
  const std::vector<double> scales{0.0, 0.25, 1.0};
  const ShrinkageChoice choice = choose_shrinkage(kernels, scales, 1.0);
  REQUIRE(choice.scale == 0.0);
  REQUIRE(choice.candidate == 0);
  REQUIRE(choice.tau == Approx(1.0));
}

TEST_CASE("kernel weights decide whose top-1 the pooled choice protects") {
  // A big kernel (many configs) where the correction moves the first pick to a 51% slower config,
  // and two 2-config kernels it fixes. Uniform weights: the two small kernels outvote the big one
  // and the full correction is kept; weighted by config count the big kernel's loss dominates and
  // the choice stays at the analytical model.
  std::vector<double> big_measured, big_analytical, big_learned;
  for (int c = 0; c < 64; ++c) {
    big_measured.push_back(1.0 + 0.5 * (c > 0) + 0.01 * c);   // config 0 alone is fastest
    big_analytical.push_back(std::log(1.0 + 0.01 * c));         // the analytical model ranks it first
    big_learned.push_back(std::log(1.0 + 0.01 * c) - 0.5 * (c == 1));  // the correction moves config 1 first
  }
  ShrinkageKernel big{big_measured, big_analytical, {big_learned}};
  ShrinkageKernel small_a{{1.0, 1.5}, logs({2.0, 1.0}), {logs({1.0, 2.0})}};
  ShrinkageKernel small_b{{1.0, 1.5}, logs({2.0, 1.0}), {logs({1.0, 2.0})}};
  struct Row {
    const char* rule;
    double scale;
  };
  const auto row = GENERATE(Row{"uniform", 1.0}, Row{"log_configs", 0.0}, Row{"configs", 0.0});
  CAPTURE(row.rule);
  for (ShrinkageKernel* k : {&big, &small_a, &small_b})
    k->weight = kernel_selection_weight(row.rule, k->measured.size());
  const std::vector<ShrinkageKernel> kernels{big, small_a, small_b};
  const ShrinkageChoice choice = choose_shrinkage(kernels, std::vector<double>{0.0, 1.0}, 10.0);
  CAPTURE(choice.tau, choice.top1, choice.score);
  REQUIRE(choice.scale == row.scale);
}

TEST_CASE("kernel weight rules: uniform, log of the config count, the count") {
  REQUIRE(kernel_selection_weight("uniform", 579) == 1.0);
  REQUIRE(kernel_selection_weight("log_configs", 579) == Approx(std::log(579.0)));
  REQUIRE(kernel_selection_weight("log_configs", 2) == Approx(std::log(2.0)));
  REQUIRE(kernel_selection_weight("configs", 16) == 16.0);
  REQUIRE_THROWS_WITH(kernel_selection_weight("size", 16), Catch::Contains("unknown kernel weight rule"));
  ShrinkageKernel k{{1.0, 2.0}, {0.0, 1.0}, {{0.0, 1.0}}};
  k.weight = 0.0;
  const std::vector<ShrinkageKernel> zero{k};
  REQUIRE_THROWS_WITH(choose_shrinkage(zero, std::vector<double>{1.0}, 1.0), Catch::Contains("not positive"));
}

TEST_CASE("choosing a factor refuses what it cannot score") {
  ShrinkageKernel k{{1.0, 2.0}, {0.0, 1.0}, {{0.0, 1.0}}};
  const std::vector<ShrinkageKernel> one{k};
  REQUIRE_THROWS_WITH(choose_shrinkage(one, std::vector<double>{}, 1.0), Catch::Contains("no scale"));
  REQUIRE_THROWS_WITH(choose_shrinkage(one, std::vector<double>{1.5}, 1.0), Catch::Contains("outside [0, 1]"));
  ShrinkageKernel two_candidates{{1.0, 2.0}, {0.0, 1.0}, {{0.0, 1.0}, {1.0, 0.0}}};
  const std::vector<ShrinkageKernel> mixed{k, two_candidates};
  REQUIRE_THROWS_WITH(choose_shrinkage(mixed, std::vector<double>{1.0}, 1.0), Catch::Contains("different numbers"));
  ShrinkageKernel single{{1.0}, {0.0}, {{0.0}}};
  const std::vector<ShrinkageKernel> unscorable{single};
  REQUIRE_THROWS_WITH(choose_shrinkage(unscorable, std::vector<double>{1.0}, 1.0), Catch::Contains("two configs"));
}
