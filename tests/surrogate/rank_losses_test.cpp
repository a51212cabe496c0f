#include <cmath>

#include <catch2/catch.hpp>

#include "surrogate/rank_losses.h"

using namespace perftune;

namespace {
double value(const torch::Tensor& t) { return t.item<double>(); }
torch::Tensor vec(std::vector<float> v) { return torch::tensor(v); }
}  // namespace

TEST_CASE("ListMLE matches the Plackett-Luce likelihood by hand") {
  // Items 0 (fastest), 1; scores are -pred = {0, -1}. NLL = log(e^0 + e^-1) - 0 + (log e^-1 - (-1)).
  REQUIRE(value(list_mle_loss(vec({0, 1}), vec({1, 2}))) == Approx(std::log(1 + std::exp(-1.0))));
  // Three items in true order 2, 0, 1 (times 2, 3, 1); scores in that order: -0.5, 0, -2.
  const double s2 = -0.5, s0 = 0.0, s1 = -2.0;
  const double expected = (std::log(std::exp(s2) + std::exp(s0) + std::exp(s1)) - s2) +
                          (std::log(std::exp(s0) + std::exp(s1)) - s0);
  REQUIRE(value(list_mle_loss(vec({0, 2, 0.5}), vec({2, 3, 1}))) == Approx(expected));
  // A perfect, well separated order costs almost nothing; the reverse costs a lot.
  REQUIRE(value(list_mle_loss(vec({0, 10, 20}), vec({1, 2, 3}))) < 1e-3);
  REQUIRE(value(list_mle_loss(vec({20, 10, 0}), vec({1, 2, 3}))) > 20);
}

TEST_CASE("pairwise losses against hand-computed cases") {
  struct Row { std::vector<float> pred, target; double hinge, logistic; };
  const auto row = GENERATE(
      // One pair, correctly ordered by 0.5 > margin 0.1: no hinge loss.
      Row{{0.0f, 0.5f}, {1.0f, 2.0f}, 0.0, std::log1p(std::exp(-0.5))},
      // One pair, wrong by 0.3: hinge 0.1 + 0.3.
      Row{{0.3f, 0.0f}, {1.0f, 2.0f}, 0.4, std::log1p(std::exp(0.3))},
      // Three pairs: gaps p_j - p_i are 0.05, 0.2, 0.15 -> hinge (0.05 + 0 + 0) / 3.
      Row{{0.0f, 0.05f, 0.2f}, {1.0f, 2.0f, 3.0f}, 0.05 / 3,
          (std::log1p(std::exp(-0.05)) + std::log1p(std::exp(-0.2)) + std::log1p(std::exp(-0.15))) / 3},
      // Ties in the target make no pairs.
      Row{{0.0f, 1.0f}, {1.0f, 1.0f}, 0.0, 0.0});
  CAPTURE(row.pred, row.target);
  REQUIRE(value(pairwise_hinge_loss(vec(row.pred), vec(row.target), 0.1)) == Approx(row.hinge).margin(1e-6));
  REQUIRE(value(pairwise_logistic_loss(vec(row.pred), vec(row.target))) == Approx(row.logistic).margin(1e-6));
}

TEST_CASE("the combined loss is the weighted sum") {
  const auto pred = vec({0.1f, 0.4f, -0.2f}), target = vec({0.0f, 1.0f, 0.5f});
  LossWeights weights;
  weights.list_mle = 1.0;
  weights.mse = 0.02;
  weights.pairwise_logistic = 0.5;
  const double expected = value(list_mle_loss(pred, target)) + 0.02 * value(log_mse_loss(pred, target)) +
                          0.5 * value(pairwise_logistic_loss(pred, target));
  REQUIRE(value(combined_loss(pred, target, weights)) == Approx(expected));
  REQUIRE(value(log_mse_loss(pred, target)) == Approx((0.01 + 0.36 + 0.49) / 3));
}
