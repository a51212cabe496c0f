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

namespace perftune {
namespace {

SearchSpace grid_space() {
  std::vector<std::int64_t> values;
  for (std::int64_t v = 0; v < 16; ++v) values.push_back(v);
  return SearchSpace({{"a", values}, {"b", values}});
}

// log seconds: 1 ms at (10, 4), rising smoothly away from it.
double true_log_seconds(const Config& c) {
  const double a = static_cast<double>(c.values[0]) - 10, b = static_cast<double>(c.values[1]) - 4;
  return std::log(1e-3) + 0.01 * (a * a + b * b);
}

std::vector<double> true_log_seconds(const std::vector<Config>& configs) {
  std::vector<double> out;
  for (const Config& c : configs) out.push_back(true_log_seconds(c));
  return out;
}

class FunctionModel : public CostModel {
 public:
  explicit FunctionModel(std::function<double(const Config&)> f) : f_(std::move(f)) {}
  std::string name() const override { return "function"; }
  void predict(const Kernel&, const SearchSpace&, std::span<const Config> configs, std::span<float> out) override {
    for (std::size_t i = 0; i < configs.size(); ++i) out[i] = static_cast<float>(f_(configs[i]));
  }
  void update(const Kernel&, const SearchSpace&, std::span<const Measurement> measurements) override {
    updates += measurements.size();
  }
  std::size_t updates = 0;

 private:
  std::function<double(const Config&)> f_;
};

using LogSeconds = std::function<double(const Config&)>;

// An exact measurement (one repeat) of `config` on a target whose runtime is `target`.
Measurement measured_on(const LogSeconds& target, const Config& config) {
  return Measurement{config, MeasureResult::from_repeats({std::exp(target(config))}, 0.0)};
}

Measurement measured(const Config& config) {
  return measured_on([](const Config& c) { return true_log_seconds(c); }, config);
}

std::vector<Measurement> random_measurements(const SearchSpace& space, std::size_t n, std::uint64_t seed) {
  Rng rng(seed);
  std::vector<Measurement> out;
  std::vector<Config> seen;
  while (out.size() < n) {
    Config c = space.sample(rng);
    if (std::find(seen.begin(), seen.end(), c) != seen.end()) continue;
    seen.push_back(c);
    out.push_back(measured(c));
  }
  return out;
}

std::vector<double> predictions(CostModel& model, const Kernel& kernel, const SearchSpace& space,
                                const std::vector<Config>& configs) {
  std::vector<float> out(configs.size());
  model.predict(kernel, space, configs, out);
  return {out.begin(), out.end()};
}

const Kernel kKernel = Kernel::opaque("bowl", "00000000000000b0");

std::vector<Measurement> measured_on(const LogSeconds& target, const std::vector<Config>& configs) {
  std::vector<Measurement> out;
  for (const Config& c : configs) out.push_back(measured_on(target, c));
  return out;
}

// The model's root mean square error in log seconds over every config of the space.
double rmse_over_space(CostModel& model, const SearchSpace& space, const LogSeconds& target) {
  const std::vector<Config> all = space.enumerate();
  const std::vector<double> predicted = predictions(model, kKernel, space, all);
  double sum = 0.0;
  for (std::size_t i = 0; i < all.size(); ++i) sum += (predicted[i] - target(all[i])) * (predicted[i] - target(all[i]));
  return std::sqrt(sum / static_cast<double>(all.size()));
}

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

// Several priors: std::vector<std::unique_ptr<CostModel>> of FunctionModels.
std::vector<std::unique_ptr<CostModel>> function_priors(const std::vector<std::function<double(const Config&)>>& fs) {
  std::vector<std::unique_ptr<CostModel>> priors;
  for (const auto& f : fs) priors.push_back(std::make_unique<FunctionModel>(f));
  return priors;
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

// Two sources that disagree: bowls with their optima at opposite corners of the grid.
double corner_bowl(const Config& c, double at) {
  const double a = static_cast<double>(c.values[0]) - at, b = static_cast<double>(c.values[1]) - at;
  return std::log(1e-3) + 0.01 * (a * a + b * b);
}

// Closer to the corner bowl's optimum than the shares' mean optimum (7.5, 7.5) is, by a margin.
bool near(const Config& c, double at) {
  return std::abs(static_cast<double>(c.values[0]) - at) + std::abs(static_cast<double>(c.values[1]) - at) <= 7.0;
}

// The batch the tuner would take: the first k distinct configs `taken` does not exclude.
std::vector<Config> first_k(const std::vector<Config>& order, std::size_t k) {
  std::vector<Config> out;
  for (const Config& c : order)
    if (out.size() < k && std::find(out.begin(), out.end(), c) == out.end()) out.push_back(c);
  return out;
}

// All configs best first by the model's score, as the tuner ranks a search's proposals.
std::vector<Config> ranked_by(CostModel& model, const SearchSpace& space) {
  std::vector<Config> all = space.enumerate();
  const std::vector<double> scores = predictions(model, kKernel, space, all);
  std::vector<std::size_t> order(all.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return scores[a] < scores[b]; });
  std::vector<Config> out;
  for (const std::size_t i : order) out.push_back(all[i]);
  return out;
}

const auto kNothingTaken = [](const Config&) { return false; };

TEST_CASE("batch choice: the default is the tuner's top-k, the proposals in rank order") {
  const SearchSpace space = grid_space();
  TargetResidualModel model(function_priors({[](const Config& c) { return corner_bowl(c, 2); },
                                             [](const Config& c) { return corner_bowl(c, 13); }}),
                            TargetResidualOptions{.exploration = 1.0});
  CHECK(model.proposal_pool(10) == 10);
  const std::vector<Config> ranked = ranked_by(model, space);
  CHECK(model.choose_batch(kKernel, space, ranked, 10, 1, 0, kNothingTaken) == ranked);
  model.update(kKernel, space, random_measurements(space, 10, 1));
  CHECK(model.choose_batch(kKernel, space, ranked, 10, 1, 1, kNothingTaken) == ranked);
}

TEST_CASE("batch choice: Thompson sampling spreads a first batch over two disagreeing priors' favourites") {
  const std::uint64_t seed = GENERATE(1u, 2u, 3u, 4u, 5u);
  CAPTURE(seed);
  const SearchSpace space = grid_space();
  auto make = [](BatchChoice batch) {
    return TargetResidualModel(function_priors({[](const Config& c) { return corner_bowl(c, 2); },
                                                [](const Config& c) { return corner_bowl(c, 13); }}),
                               TargetResidualOptions{.exploration = 1.0, .batch = batch, .batch_pool = 3, .source_favourites = 5});
  };
  TargetResidualModel top = make(BatchChoice::kTop), thompson = make(BatchChoice::kThompson);
  CHECK(thompson.proposal_pool(10) == 30);
  // The shares' mean puts its optimum halfway between the corners: the top-k batch sits there.
  const std::vector<Config> ranked = ranked_by(top, space);
  const std::vector<Config> greedy = first_k(top.choose_batch(kKernel, space, ranked, 10, seed, 0, kNothingTaken), 10);
  CHECK(std::none_of(greedy.begin(), greedy.end(), [](const Config& c) { return near(c, 2) || near(c, 13); }));
  // Thompson sees the proposals (the 30 best by the mean) and each prior's favourites among the
  // configs scored so far (here all: ranked_by asked for every config).
  ranked_by(thompson, space);
  const std::vector<Config> pool(ranked.begin(), ranked.begin() + 30);
  const std::vector<Config> order = thompson.choose_batch(kKernel, space, pool, 10, seed, 0, kNothingTaken);
  const std::vector<Config> batch = first_k(order, 10);
  REQUIRE(batch.size() == 10);
  CHECK(batch[0] == ranked[0]);  // the first slot is the top-k pick
  CHECK(std::any_of(batch.begin(), batch.end(), [](const Config& c) { return near(c, 2); }));
  CHECK(std::any_of(batch.begin(), batch.end(), [](const Config& c) { return near(c, 13); }));
  // Deterministic for (seed, round): the same call gives the same batch.
  CHECK(thompson.choose_batch(kKernel, space, pool, 10, seed, 0, kNothingTaken) == order);
}

TEST_CASE("batch choice: after a fit, Thompson picks k distinct configs the tuner has not taken") {
  const std::uint64_t seed = GENERATE(1u, 2u, 3u);
  const bool sample_residual = GENERATE(false, true);
  CAPTURE(seed, sample_residual);
  const SearchSpace space = grid_space();
  TargetResidualModel model(function_priors({[](const Config& c) { return corner_bowl(c, 2); },
                                             [](const Config& c) { return true_log_seconds(c) + 1.0; }}),
                            TargetResidualOptions{.exploration = 1.0, .batch = BatchChoice::kThompson, .source_favourites = 4,
                                                  .sample_residual = sample_residual});
  const std::vector<Measurement> measurements = random_measurements(space, 20, seed);
  model.update(kKernel, space, measurements);
  REQUIRE(model.fit(kKernel));
  auto taken = [&](const Config& c) {
    return std::any_of(measurements.begin(), measurements.end(), [&](const Measurement& m) { return m.config == c; });
  };
  std::vector<Config> ranked;
  for (const Config& c : ranked_by(model, space))
    if (!taken(c)) ranked.push_back(c);
  ranked.resize(100);
  const std::vector<Config> order = model.choose_batch(kKernel, space, ranked, 10, seed, 2, taken);
  const std::vector<Config> batch = first_k(order, 10);
  REQUIRE(batch.size() == 10);
  CHECK(batch[0] == ranked[0]);
  CHECK(std::none_of(batch.begin(), batch.begin() + 10, taken));
  // The data favour the source that knows the bowl: most picks lie near its optimum (10, 4).
  const auto near_optimum = std::count_if(batch.begin(), batch.end(), [](const Config& c) {
    return std::abs(c.values[0] - 10) + std::abs(c.values[1] - 4) <= 4;
  });
  CHECK(near_optimum >= 5);
  CHECK(model.choose_batch(kKernel, space, ranked, 10, seed, 2, taken) == order);
}

TEST_CASE("batch choice: local slots step one knob off the incumbent, which the proposals never reach") {
  const std::uint64_t seed = GENERATE(1u, 2u, 3u);
  CAPTURE(seed);
  const SearchSpace space = grid_space();
  // Two sources that both point to the far corner (2, 2); the target's optimum is (10, 4).
  auto make = [](std::size_t neighbours, std::size_t local_slots) {
    return TargetResidualModel(function_priors({[](const Config& c) { return corner_bowl(c, 2); },
                                                [](const Config& c) { return corner_bowl(c, 3); }}),
                               TargetResidualOptions{.exploration = 1.0, .batch = BatchChoice::kThompson,
                                                     .sample_residual = true, .incumbent_neighbours = neighbours,
                                                     .local_slots = local_slots});
  };
  const Config incumbent{{10, 4}};  // the optimum: the best measured, whatever else was drawn
  std::vector<Measurement> measurements = random_measurements(space, 12, seed);
  auto taken = [&](const Config& c) {
    return std::any_of(measurements.begin(), measurements.end(), [&](const Measurement& m) { return m.config == c; });
  };
  if (!taken(incumbent)) measurements.push_back(measured(incumbent));
  auto one_knob_off = [&](const Config& c) { return (c.values[0] == 10) != (c.values[1] == 4); };
  for (const std::size_t local_slots : {0u, 3u}) {
    CAPTURE(local_slots);
    TargetResidualModel model = make(local_slots > 0 ? 1 : 0, local_slots);
    model.update(kKernel, space, measurements);
    std::vector<Config> ranked;  // the search's proposals: the sources' corner, far from the incumbent
    for (const Config& c : ranked_by(model, space))
      if (!taken(c) && c.values[0] < 8 && c.values[1] < 3 && ranked.size() < 30) ranked.push_back(c);
    const std::vector<Config> batch = first_k(model.choose_batch(kKernel, space, ranked, 6, seed, 1, taken), 6);
    REQUIRE(batch.size() == 6);
    CHECK(std::none_of(batch.begin(), batch.end(), taken));
    // Without a neighbourhood nothing reaches the incumbent; with one, slots 1..local_slots take its
    // unmeasured one-knob changes (and the other slots may too, they compete with the proposals).
    const auto local = static_cast<std::size_t>(std::count_if(batch.begin(), batch.end(), one_knob_off));
    if (local_slots == 0) CHECK(local == 0);
    else CHECK(local >= local_slots);
    for (std::size_t slot = 1; slot <= local_slots; ++slot) CHECK(one_knob_off(batch[slot]));
  }
}

TEST_CASE("batch choice: a local slot whose neighbours the first slot took falls back to every candidate") {
  // {a: 0, 1, 2} x {b: 0, 1}; (0, 0) and (2, 1) measured, (0, 0) the best: its three unmeasured
  // neighbours fill the three local slots' quota, but the prior's favourite (1, 0) is one of them
  // and goes first, so the last local slot has none left and takes the remaining proposal.
  const SearchSpace space({{"a", {0, 1, 2}}, {"b", {0, 1}}});
  auto favourite = [](const Config& c) { return c == Config{{1, 0}} ? -10.0 : 0.0; };
  TargetResidualModel model(function_priors({favourite}),
                            TargetResidualOptions{.exploration = 1.0, .batch = BatchChoice::kThompson,
                                                  .incumbent_neighbours = 1, .local_slots = 3});
  const std::vector<Measurement> measurements = {
      Measurement{Config{{0, 0}}, MeasureResult::from_repeats({1e-3}, 0.0)},
      Measurement{Config{{2, 1}}, MeasureResult::from_repeats({2e-3}, 0.0)}};
  model.update(kKernel, space, measurements);
  REQUIRE(model.fit(kKernel));
  auto taken = [&](const Config& c) { return c == Config{{0, 0}} || c == Config{{2, 1}}; };
  const std::vector<Config> batch = first_k(model.choose_batch(kKernel, space, {Config{{1, 1}}}, 4, 1, 1, taken), 4);
  REQUIRE(batch.size() == 4);
  CHECK(batch[0] == Config{{1, 0}});
  CHECK(std::set<Config>(batch.begin(), batch.end()) ==
        std::set<Config>{Config{{1, 0}}, Config{{2, 0}}, Config{{0, 1}}, Config{{1, 1}}});
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
  CHECK_THROWS_AS(TargetResidualModel(function_priors({[](const Config&) { return 0.0; }}),
                                      TargetResidualOptions{.batch = BatchChoice::kThompson, .batch_pool = 0}),
                  std::invalid_argument);
}

TEST_CASE("knob coordinates: the domain index scaled to [0, 1], single-valued knobs left out") {
  const SearchSpace space({{"x", {16, 32, 64}}, {"fixed", {15}}, {"flag", {0, 1}}});
  const std::vector<double> z = knob_index_coords(space, Config{{32, 15, 1}});
  REQUIRE(z.size() == 2);
  CHECK(z[0] == Approx(0.5));
  CHECK(z[1] == Approx(1.0));
}

}  // namespace
}  // namespace perftune
