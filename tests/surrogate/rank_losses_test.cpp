#include <cmath>

#include <catch2/catch.hpp>

#include "surrogate/gnn/rank_losses.h"

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

TEST_CASE("the LambdaRank-style loss weights pairs by gain and discount deltas") {
  // Two items: one pair, weight |G0 - G1| * |D0 - D1| cancels in the weighted mean: the plain logistic loss.
  REQUIRE(value(pairwise_lambda_loss(vec({0.0f, 0.5f}), vec({1.0f, 2.0f}))) == Approx(std::log1p(std::exp(-0.5))));
  // Three items, predicted in the true order (gaps 0.1, 0.3 between neighbours). Gains and discounts
  // are both g(r) = 1 / log2(2 + r): pair (0,1) weighs (g0 - g1)^2, (0,2) (g0 - g2)^2, (1,2) (g1 - g2)^2.
  auto g = [](double r) { return 1.0 / std::log2(2.0 + r); };
  const double w01 = std::pow(g(0) - g(1), 2), w02 = std::pow(g(0) - g(2), 2), w12 = std::pow(g(1) - g(2), 2);
  const double expected = (w01 * std::log1p(std::exp(-0.1)) + w02 * std::log1p(std::exp(-0.4)) +
                           w12 * std::log1p(std::exp(-0.3))) / (w01 + w02 + w12);
  REQUIRE(value(pairwise_lambda_loss(vec({0.0f, 0.1f, 0.4f}), vec({1.0f, 2.0f, 3.0f}))) == Approx(expected));
  // The top pair outweighs the bottom one: a swap at the top costs more than the same swap at the bottom.
  const double top_swapped = value(pairwise_lambda_loss(vec({1.0f, 0.0f, 2.0f, 3.0f}), vec({1.0f, 2.0f, 3.0f, 4.0f})));
  const double bottom_swapped = value(pairwise_lambda_loss(vec({0.0f, 1.0f, 3.0f, 2.0f}), vec({1.0f, 2.0f, 3.0f, 4.0f})));
  REQUIRE(top_swapped > bottom_swapped);
  // Ties in the target make no pairs.
  REQUIRE(value(pairwise_lambda_loss(vec({0.0f, 1.0f}), vec({1.0f, 1.0f}))) == 0.0);
}
