// The prior corrected by the target's measurements (surrogate/transfer/target_residual.h), on a 16 x 16
// product space whose true log runtime is a smooth bowl: a prior that is right up to a constant
// keeps its weight, one that ranks backwards is switched off and the residual learns the target,
// failures count as slow, and the prior learns only when asked to.
#include "surrogate/transfer/target_residual.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>
#include <set>

#include <catch2/catch.hpp>

#include "ir/random.h"
#include "surrogate/evaluation/ranking_metrics.h"
#include "surrogate/residual_test_support.h"

namespace perftune {
namespace {

using namespace residual_testing;

TEST_CASE("before two successful measurements the prior's prediction passes through") {
  const SearchSpace space = grid_space();
  const std::vector<Config> all = space.enumerate();
  auto prior = [](const Config& c) { return 0.1 * static_cast<double>(c.values[0]); };
  TargetResidualModel model(std::make_unique<FunctionModel>(prior));
  const std::vector<double> before = predictions(model, kKernel, space, all);
  for (std::size_t i = 0; i < all.size(); ++i) REQUIRE(before[i] == Approx(prior(all[i])));
  const std::vector<Measurement> one_ok_one_failed = {
      measured(Config{{3, 3}}), Measurement{Config{{5, 5}}, MeasureResult::failure(MeasureStatus::kRuntimeError, "crash")}};
  model.update(kKernel, space, one_ok_one_failed);
  CHECK_FALSE(model.fit(kKernel));
  CHECK(predictions(model, kKernel, space, all) == before);
}

TEST_CASE("a prior right up to a constant keeps its weight and the offset is learned") {
  const std::uint64_t seed = GENERATE(1u, 2u, 3u);
  CAPTURE(seed);
  const SearchSpace space = grid_space();
  TargetResidualModel model(std::make_unique<FunctionModel>([](const Config& c) { return true_log_seconds(c) + 3.0; }));
  model.update(kKernel, space, random_measurements(space, 10, seed));
  const auto fit = model.fit(kKernel);
  REQUIRE(fit);
  CHECK(fit->points == 10);
  CHECK(fit->prior_weight == Approx(1.0).margin(0.1));
  const std::vector<Config> all = space.enumerate();
  const std::vector<double> predicted = predictions(model, kKernel, space, all);
  double worst = 0.0;
  for (std::size_t i = 0; i < all.size(); ++i) worst = std::max(worst, std::abs(predicted[i] - true_log_seconds(all[i])));
  CHECK(worst < 0.05);  // the bowl spans 2.3 in log seconds
}

TEST_CASE("a prior that ranks the target backwards is switched off and the residual learns the target") {
  const std::uint64_t seed = GENERATE(1u, 2u, 3u);
  CAPTURE(seed);
  const SearchSpace space = grid_space();
  const std::vector<Config> all = space.enumerate();
  const std::vector<double> truth = true_log_seconds(all);
  TargetResidualModel model(std::make_unique<FunctionModel>([](const Config& c) { return -true_log_seconds(c); }));
  CHECK(kendall_tau(predictions(model, kKernel, space, all), truth) < -0.99);
  model.update(kKernel, space, random_measurements(space, 30, seed));
  const auto fit = model.fit(kKernel);
  REQUIRE(fit);
  CHECK(fit->prior_weight == 0.0);
  const std::vector<double> predicted = predictions(model, kKernel, space, all);
  CHECK(kendall_tau(predicted, truth) > 0.8);
  // Its favourite is within two steps of the optimum (10, 4).
  const Config& best = all[static_cast<std::size_t>(std::min_element(predicted.begin(), predicted.end()) - predicted.begin())];
  CAPTURE(best.to_string());
  CHECK(std::abs(best.values[0] - 10) + std::abs(best.values[1] - 4) <= 2);
}

TEST_CASE("failed measurements count as slow, so search is steered away from where they are") {
  const SearchSpace space = grid_space();
  // A flat prior and a target where everything with a >= 12 fails.
  TargetResidualModel model(std::make_unique<FunctionModel>([](const Config&) { return 0.0; }));
  std::vector<Measurement> batch;
  for (std::int64_t a = 0; a < 16; a += 3)
    for (std::int64_t b = 0; b < 16; b += 3) {
      const Config c{{a, b}};
      batch.push_back(a >= 12 ? Measurement{c, MeasureResult::failure(MeasureStatus::kCompileError, "too big")} : measured(c));
    }
  model.update(kKernel, space, batch);
  REQUIRE(model.fit(kKernel));
  const std::vector<double> near_failures = predictions(model, kKernel, space, {Config{{13, 4}}, Config{{14, 10}}});
  const std::vector<double> near_best = predictions(model, kKernel, space, {Config{{10, 4}}});
  for (double p : near_failures) CHECK(p > near_best[0] + 0.5);
}

TEST_CASE("exploration lowers the bound most where the target's measurements say least") {
  const SearchSpace space = grid_space();
  // A flat prior, and measurements in the corner a, b < 6 only.
  std::vector<Measurement> batch;
  for (std::int64_t a = 0; a < 6; a += 2)
    for (std::int64_t b = 0; b < 6; b += 2) batch.push_back(measured(Config{{a, b}}));
  // Inside the measured corner, just outside it, far from it.
  const std::vector<Config> probes = {Config{{3, 3}}, Config{{8, 8}}, Config{{15, 15}}};
  auto bound = [&](double kappa) {
    TargetResidualModel model(std::make_unique<FunctionModel>([](const Config&) { return 0.0; }),
                              TargetResidualOptions{.exploration = kappa});
    model.update(kKernel, space, batch);
    REQUIRE(model.fit(kKernel));
    REQUIRE(model.fit(kKernel)->signal_variance > 0);
    return predictions(model, kKernel, space, probes);
  };
  const std::vector<double> mean = bound(0.0), one = bound(1.0), two = bound(2.0);
  std::vector<double> bonus(probes.size());
  for (std::size_t i = 0; i < probes.size(); ++i) {
    CAPTURE(i);
    bonus[i] = mean[i] - one[i];
    CHECK(bonus[i] >= 0);
    CHECK(mean[i] - two[i] == Approx(2 * bonus[i]).margin(1e-4));  // the same fit, kappa standard deviations
  }
  CHECK(bonus[0] < bonus[1]);
  CHECK(bonus[1] < bonus[2]);
}

TEST_CASE("the prior learns from the target only when asked to") {
  const bool fine_tune = GENERATE(false, true);
  CAPTURE(fine_tune);
  const SearchSpace space = grid_space();
  auto prior = std::make_unique<FunctionModel>([](const Config& c) { return true_log_seconds(c); });
  FunctionModel& seen = *prior;
  TargetResidualModel model(std::move(prior), TargetResidualOptions{.fine_tune_prior = fine_tune});
  model.update(kKernel, space, random_measurements(space, 5, 7));
  CHECK(seen.updates == (fine_tune ? 5u : 0u));
}

TEST_CASE("only the most recent points are kept") {
  const SearchSpace space = grid_space();
  TargetResidualModel model(std::make_unique<FunctionModel>([](const Config&) { return 0.0; }),
                            TargetResidualOptions{.max_points = 8});
  model.update(kKernel, space, random_measurements(space, 20, 3));
  REQUIRE(model.fit(kKernel));
  CHECK(model.fit(kKernel)->points == 8);
}

TEST_CASE("several priors: before any fit the prediction is their mean (equal shares)") {
  const SearchSpace space = grid_space();
  const std::vector<Config> all = space.enumerate();
  auto first = [](const Config& c) { return 0.1 * static_cast<double>(c.values[0]); };
  auto second = [](const Config& c) { return -0.3 * static_cast<double>(c.values[1]) + 2.0; };
  auto third = [](const Config& c) { return true_log_seconds(c); };
  TargetResidualModel model(function_priors({first, second, third}));
  const std::vector<double> before = predictions(model, kKernel, space, all);
  for (std::size_t i = 0; i < all.size(); ++i) {
    CAPTURE(all[i].to_string());
    REQUIRE(before[i] == Approx((first(all[i]) + second(all[i]) + third(all[i])) / 3.0).margin(1e-5));
  }
  CHECK_FALSE(model.fit(kKernel));
}

TEST_CASE("several priors: a source that agrees with the target outweighs one that does not") {
  const std::uint64_t seed = GENERATE(1u, 2u, 3u);
  const std::size_t points = GENERATE(10u, 30u);
  CAPTURE(seed, points);
  const SearchSpace space = grid_space();
  // The agreeing source knows the bowl (off by a constant, as another device's times are); the other
  // knows only knob a, with its optimum at the wrong end (a device that ranks most configs differently).
  auto agrees = [](const Config& c) { return true_log_seconds(c) - 1.0; };
  auto differs = [](const Config& c) { return std::log(1e-3) + 0.02 * static_cast<double>(c.values[0]); };
  TargetResidualModel model(function_priors({differs, agrees}));
  model.update(kKernel, space, random_measurements(space, points, seed));
  const auto fit = model.fit(kKernel);
  REQUIRE(fit);
  REQUIRE(fit->prior_weights.size() == 2);
  CAPTURE(fit->prior_weights[0], fit->prior_weights[1]);
  CHECK(fit->prior_weights[1] > fit->prior_weights[0]);
  CHECK(fit->prior_weights[1] > 0.5);  // more than its equal share
  CHECK(fit->prior_weight == Approx(fit->prior_weights[0] + fit->prior_weights[1]));
}

TEST_CASE("several priors: a source that ranks the target backwards is clamped to zero weight") {
  const std::uint64_t seed = GENERATE(1u, 2u, 3u);
  CAPTURE(seed);
  const SearchSpace space = grid_space();
  const std::vector<Config> all = space.enumerate();
  const std::vector<double> truth = true_log_seconds(all);
  auto backwards = [](const Config& c) { return -true_log_seconds(c); };
  // Beside a source that knows nothing of the target (a fixed pseudo-random landscape), the
  // backwards one would earn a negative weight: it is switched off instead.
  auto unrelated = [](const Config& c) { return 0.3 * std::sin(7.0 * c.values[0] + 3.0 * c.values[1] * c.values[1]); };
  TargetResidualModel model(function_priors({unrelated, backwards}));
  model.update(kKernel, space, random_measurements(space, 30, seed));
  const auto fit = model.fit(kKernel);
  REQUIRE(fit);
  CAPTURE(fit->prior_weights[0], fit->prior_weights[1]);
  CHECK(fit->prior_weights[1] == 0.0);
  CHECK(kendall_tau(predictions(model, kKernel, space, all), truth) > 0.5);  // the residual learns the rest

  // Beside a source that explains the target, it keeps only a sliver of its share (the residual
  // absorbs what it spoils) and the ranking is the target's.
  auto agrees = [](const Config& c) { return true_log_seconds(c) + 2.0; };
  TargetResidualModel paired(function_priors({agrees, backwards}));
  paired.update(kKernel, space, random_measurements(space, 20, seed));
  const ResidualFit both = *paired.fit(kKernel);
  CAPTURE(both.prior_weights[0], both.prior_weights[1]);
  CHECK(both.prior_weights[1] < 0.15);
  CHECK(both.prior_weights[0] > 0.85);
  CHECK(kendall_tau(predictions(paired, kKernel, space, all), truth) > 0.95);
}

TEST_CASE("one prior is the single-prior residual; two copies of it are one prior") {
  // The shares' prior keeps its total at the one-prior belief, so duplicating a source changes nothing.
  const std::uint64_t seed = GENERATE(1u, 2u);
  CAPTURE(seed);
  const SearchSpace space = grid_space();
  const std::vector<Config> all = space.enumerate();
  auto prior = [](const Config& c) { return 0.5 * true_log_seconds(c) + 0.05 * static_cast<double>(c.values[1]); };
  const std::vector<Measurement> batch = random_measurements(space, 15, seed);
  TargetResidualModel single(std::make_unique<FunctionModel>(prior), TargetResidualOptions{.exploration = 1.0});
  TargetResidualModel listed(function_priors({prior}), TargetResidualOptions{.exploration = 1.0});
  TargetResidualModel twice(function_priors({prior, prior}), TargetResidualOptions{.exploration = 1.0});
  for (TargetResidualModel* model : {&single, &listed, &twice}) model->update(kKernel, space, batch);
  const ResidualFit one = *single.fit(kKernel), two = *twice.fit(kKernel);
  CHECK(one.prior_weights == std::vector<double>{one.prior_weight});
  CHECK(listed.fit(kKernel)->prior_weight == one.prior_weight);
  CHECK(predictions(listed, kKernel, space, all) == predictions(single, kKernel, space, all));
  CHECK(two.prior_weights[0] == Approx(two.prior_weights[1]));
  CHECK(two.prior_weight == Approx(one.prior_weight).epsilon(1e-6));
  CHECK(two.offset == Approx(one.offset).epsilon(1e-6));
  CHECK(two.length_scale == one.length_scale);
  const std::vector<double> a = predictions(single, kKernel, space, all), b = predictions(twice, kKernel, space, all);
  for (std::size_t i = 0; i < all.size(); ++i) REQUIRE(b[i] == Approx(a[i]).margin(1e-4));
}

TEST_CASE("relevance: a knob the target ignores is weighted down, and the residual predicts better for it") {
  const std::uint64_t seed = GENERATE(1u, 2u, 3u);
  CAPTURE(seed);
  const SearchSpace space = grid_space();
  // Only knob a matters on the target, sharply; the prior knows nothing (a constant).
  auto target = [](const Config& c) {
    const double a = static_cast<double>(c.values[0]) - 10;
    return std::log(1e-3) + 0.05 * a * a;
  };
  std::vector<Config> sampled;
  for (const Measurement& m : random_measurements(space, 30, seed)) sampled.push_back(m.config);
  auto make = [](bool relevance) {
    return TargetResidualModel(function_priors({[](const Config&) { return std::log(1e-3); }}),
                               TargetResidualOptions{.relevance = relevance});
  };
  TargetResidualModel isotropic = make(false), relevant = make(true);
  // Below 3 points per knob the fit stays isotropic.
  const std::vector<Config> few(sampled.begin(), sampled.begin() + 5);
  relevant.update(kKernel, space, measured_on(target, few));
  CHECK(relevant.fit(kKernel)->relevance == std::vector<double>{1.0, 1.0});
  relevant.update(kKernel, space, measured_on(target, std::vector<Config>(sampled.begin() + 5, sampled.end())));
  isotropic.update(kKernel, space, measured_on(target, sampled));
  const std::vector<double> relevance = relevant.fit(kKernel)->relevance;
  REQUIRE(relevance.size() == 2);
  CHECK(relevance[1] < relevance[0]);
  CHECK(isotropic.fit(kKernel)->relevance == std::vector<double>{1.0, 1.0});
  CHECK(rmse_over_space(relevant, space, target) < rmse_over_space(isotropic, space, target));
}

TEST_CASE("categorical: a knob whose values follow no order is told apart by value, an ordered one stays ordered") {
  const std::uint64_t seed = GENERATE(1u, 2u, 3u);
  CAPTURE(seed);
  const SearchSpace space = grid_space();
  // Knob a: each value its own offset, unrelated to its neighbours' (like a block width whose
  // runtime depends on its alignment); knob b: smooth. The prior knows nothing (a constant).
  static constexpr double kOffset[16] = {0.9, 0.1, 0.7, 0.0, 1.0, 0.3, 0.8, 0.2, 0.6, 0.05, 0.95, 0.4, 0.15, 0.85, 0.25, 0.5};
  auto target = [](const Config& c) {
    const double b = static_cast<double>(c.values[1]) - 4;
    return std::log(1e-3) + kOffset[c.values[0]] + 0.01 * b * b;
  };
  std::vector<Config> sampled;
  for (const Measurement& m : random_measurements(space, 60, seed)) sampled.push_back(m.config);
  auto make = [](bool categorical) {
    return TargetResidualModel(function_priors({[](const Config&) { return std::log(1e-3); }}),
                               TargetResidualOptions{.relevance = true, .categorical = categorical});
  };
  TargetResidualModel ordered = make(false), chosen = make(true);
  ordered.update(kKernel, space, measured_on(target, sampled));
  chosen.update(kKernel, space, measured_on(target, sampled));
  CHECK(ordered.fit(kKernel)->categorical.empty());
  CHECK(chosen.fit(kKernel)->categorical == std::vector<bool>{true, false});
  CHECK(rmse_over_space(chosen, space, target) < 0.8 * rmse_over_space(ordered, space, target));
}

TEST_CASE("a residual needs at least one prior and at most a handful") {
  CHECK_THROWS_AS(TargetResidualModel(std::vector<std::unique_ptr<CostModel>>{}), std::invalid_argument);
  std::vector<std::function<double(const Config&)>> many(9, [](const Config&) { return 0.0; });
  CHECK_THROWS_AS(TargetResidualModel(function_priors(many)), std::invalid_argument);
}

TEST_CASE("knob coordinates: the domain index scaled to [0, 1], single-valued knobs left out") {
  const SearchSpace space({{"x", {16, 32, 64}}, {"fixed", {15}}, {"flag", {0, 1}}});
  const std::vector<double> z = space.index_coords(Config{{32, 15, 1}});
  REQUIRE(z.size() == 2);
  CHECK(z[0] == Approx(0.5));
  CHECK(z[1] == Approx(1.0));
}

}  // namespace
}  // namespace perftune
