#include <algorithm>
#include <cmath>
#include <set>
#include <sstream>

#include "surrogate/analytical/analytical_model.h"
#include "surrogate/evaluation/ranking_metrics.h"
#include "surrogate/gnn/gnn_state.h"
#include "surrogate/training/trainer.h"
#include "synthetic_kernels.h"
#include "test_support.h"
// After libtorch: c10's logging defines a CHECK of its own, which would replace Catch's.
#include <catch2/catch.hpp>

using namespace perftune;

namespace {

GnnParams small_params(const std::string& join = "late") { return testing::small_gnn_params(32, 16, join); }

TrainOptions quick_options() {
  TrainOptions options;
  options.epochs = 30;
  options.steps_per_epoch = 25;
  options.kernels_per_step = 2;
  options.configs_per_kernel = 16;
  options.seed = 11;
  return options;
}

// An ensemble of 3 whose members each hold out a window of 2 whole kernels (of 5 in the tests' corpora).
TrainOptions kernel_window_options(int epochs, int steps) {
  TrainOptions options = quick_options();
  options.epochs = epochs;
  options.steps_per_epoch = steps;
  options.validation = "kernels";
  options.validation_fraction = 0.4;  // 2 of 5 kernels per member
  options.ensemble = 3;
  return options;
}

// The model's ranking metrics over every successful config of each kernel, averaged over kernels.
RankingMetrics ranking_on(CostModel& model, const std::vector<MeasuredKernel>& kernels) {
  RankingMetricsAccumulator metrics;
  for (const MeasuredKernel& k : kernels) {
    std::vector<Config> configs;
    std::vector<double> measured;
    for (const auto& m : k.measurements)
      if (m.result.ok()) {
        configs.push_back(m.config);
        measured.push_back(m.result.seconds);
      }
    std::vector<float> predicted(configs.size());
    model.predict(k.kernel, *k.space, configs, predicted);
    metrics.add_kernel(std::vector<double>(predicted.begin(), predicted.end()), measured, true);
  }
  return metrics.average();
}

double mean_tau(CostModel& model, const std::vector<MeasuredKernel>& kernels) { return ranking_on(model, kernels).kendall_tau; }

}  // namespace

TEST_CASE("a tiny training run learns a known tile ranking that an untrained model does not") {
  const std::string join = GENERATE("late", "early");
  CAPTURE(join);
  const auto train = testing::synthetic_corpus(6, 21);
  const auto validation = testing::synthetic_corpus(3, 50);
  const auto held_out = testing::synthetic_corpus(3, 99);
  GnnCostModel untrained(small_params(join), FeatureVocabulary::build(testing::pointers(train), 1), quick_options());
  const double before = mean_tau(untrained, held_out);
  std::ostringstream progress;
  TrainReport report;
  auto model = train_gnn(testing::pointers(train), testing::pointers(validation), small_params(join), quick_options(),
                         &progress, &report);
  const double after = mean_tau(*model, held_out);
  CAPTURE(before, after, progress.str());
  // The law has a clear interior optimum; a learned order reaches ~0.9, an untrained network stays below 0.6.
  REQUIRE(before < 0.6);
  REQUIRE(after > 0.8);
  REQUIRE_FALSE(report.config_holdout);
  REQUIRE(report.epochs >= 1);
  REQUIRE(progress.str().find("validation tau") != std::string::npos);
}

TEST_CASE("fast groups draw their share from the fastest configs, without repeats") {
  const MeasuredKernel k = testing::measured_kernel("k", 512, 512, 512);
  std::vector<Measurement> fastest_first = k.measurements;
  std::sort(fastest_first.begin(), fastest_first.end(),
            [](const Measurement& a, const Measurement& b) { return a.result.seconds < b.result.seconds; });
  struct Row { std::size_t fast_count, count; double share; std::size_t expected_fast, expected_size; };
  const auto row = GENERATE(Row{6, 12, 0.5, 6, 12}, Row{6, 16, 0.25, 4, 16}, Row{9, 10, 1.0, 9, 9},
                            // The fast part runs out at 2: the group is smaller, never padded with repeats.
                            Row{2, 12, 0.5, 2, 8}, Row{6, 12, 0.0, 0, 12});
  CAPTURE(row.fast_count, row.count, row.share);
  Rng rng(7);
  const auto group = sample_fast_group(k.kernel, *k.space, fastest_first, row.fast_count, row.count, row.share, rng);
  REQUIRE(group.configs.size() == row.expected_size);
  REQUIRE(group.log_seconds.size() == row.expected_size);
  std::set<Config> fast_end;
  for (std::size_t i = 0; i < row.fast_count; ++i) fast_end.insert(fastest_first[i].config);
  std::set<Config> seen;
  for (std::size_t i = 0; i < group.configs.size(); ++i) {
    REQUIRE(seen.insert(group.configs[i]).second);
    CAPTURE(i);
    REQUIRE(fast_end.count(group.configs[i]) == (i < row.expected_fast ? 1u : 0u));  // the fast part first, then the others
  }
}

TEST_CASE("a fixed seed gives the same model") {
  struct Row { int ensemble; const char* validation; };
  const auto row = GENERATE(Row{1, "configs"}, Row{2, "configs"}, Row{2, "kernels"});
  CAPTURE(row.ensemble, row.validation);
  const auto train = testing::synthetic_corpus(3, 5);
  TrainOptions options = quick_options();
  options.epochs = 2;
  options.steps_per_epoch = 5;
  options.ensemble = row.ensemble;
  options.validation = row.validation;
  auto a = train_gnn(testing::pointers(train), {}, small_params(), options, nullptr);
  auto b = train_gnn(testing::pointers(train), {}, small_params(), options, nullptr);
  const auto& k = train[1];
  std::vector<Config> configs;
  for (const auto& m : k.measurements) configs.push_back(m.config);
  std::vector<float> pa(configs.size()), pb(configs.size());
  a->predict(k.kernel, *k.space, configs, pa);
  b->predict(k.kernel, *k.space, configs, pb);
  REQUIRE(pa == pb);
}

TEST_CASE("an ensemble ranks held-out kernels at least as well as its worst member") {
  const auto train = testing::synthetic_corpus(6, 21);
  const auto validation = testing::synthetic_corpus(3, 50);
  const auto held_out = testing::synthetic_corpus(3, 99);
  TrainOptions options = quick_options();
  options.epochs = 8;  // short training, so the members still differ
  options.ensemble = 3;
  TrainReport report;
  auto model = train_gnn(testing::pointers(train), testing::pointers(validation), small_params(), options, nullptr, &report);
  REQUIRE(model->ensemble_size() == 3);
  REQUIRE(report.members.size() == 3);
  // Each member as a model of its own, over the ensemble's weights.
  struct Member : CostModel {
    GnnCostModel* model;
    std::size_t index;
    std::string name() const override { return "member"; }
    void predict(const Kernel& kernel, const SearchSpace& space, std::span<const Config> configs, std::span<float> out) override {
      model->predict_member(index, kernel, space, configs, out);
    }
  };
  double worst = 1.0;
  for (std::size_t m = 0; m < 3; ++m) {
    Member member;
    member.model = model.get();
    member.index = m;
    worst = std::min(worst, mean_tau(member, held_out));
    CAPTURE(m, report.members[m].best_epoch, report.members[m].seed);
    if (m == 0) REQUIRE(report.members[m].seed == options.seed);  // member 0 is the single model's seed
  }
  REQUIRE(report.members[1].seed != report.members[0].seed);
  // The members differ (else the comparison below says nothing).
  const auto& k = held_out[0];
  std::vector<Config> configs;
  for (const auto& m : k.measurements) configs.push_back(m.config);
  std::vector<float> p0(configs.size()), p1(configs.size());
  model->predict_member(0, k.kernel, *k.space, configs, p0);
  model->predict_member(1, k.kernel, *k.space, configs, p1);
  REQUIRE(p0 != p1);
  const double ensemble = mean_tau(*model, held_out);
  CAPTURE(worst, ensemble);
  REQUIRE(ensemble >= worst);
  REQUIRE(ensemble > 0.6);
  REQUIRE_THROWS_AS(model->predict_member(3, k.kernel, *k.space, configs, p0), std::out_of_range);
}

TEST_CASE("validation by kernels holds out whole training kernels, a different window per member") {
  const auto train = testing::synthetic_corpus(5, 31);
  const TrainOptions options = kernel_window_options(1, 2);
  TrainReport report;
  (void)train_gnn(testing::pointers(train), {}, small_params(), options, nullptr, &report);
  REQUIRE_FALSE(report.config_holdout);
  REQUIRE(report.members.size() == 3);
  std::set<std::string> covered;
  for (const MemberReport& member : report.members) {
    CAPTURE(member.validation_kernels);
    REQUIRE(member.validation_kernels.size() == 2);
    REQUIRE(std::isfinite(member.best_validation_tau));
    covered.insert(member.validation_kernels.begin(), member.validation_kernels.end());
  }
  // 3 windows of 2 over 5 kernels: every kernel is held out by some member.
  REQUIRE(covered.size() == 5);
  REQUIRE(report.members[0].validation_kernels != report.members[1].validation_kernels);

  const auto one = testing::synthetic_corpus(1, 31);
  REQUIRE_THROWS_WITH(train_gnn(testing::pointers(one), {}, small_params(), options, nullptr),
                      Catch::Contains("at least two training kernels"));
}

TEST_CASE("training without usable measurements is refused") {
  std::vector<MeasuredKernel> kernels{testing::measured_kernel("all_failed", 64, 64, 64, 36)};
  REQUIRE_THROWS_WITH(train_gnn(testing::pointers(kernels), {}, small_params(), quick_options(), nullptr),
                      Catch::Contains("two successful measurements"));
}

TEST_CASE("a caller's selection score joins model selection") {
  // A score that favours the third epoch by far: training must keep it, whatever validation tau says.
  const auto train = testing::synthetic_corpus(3, 21);
  TrainOptions options = quick_options();
  options.epochs = 5;
  options.steps_per_epoch = 3;
  options.patience = 10;
  int calls = 0;
  const SelectionScore favour_third = [&calls](CostModel& model) {
    std::vector<float> out(1);
    const auto probe = testing::synthetic_corpus(1, 5);
    model.predict(probe[0].kernel, *probe[0].space, std::span<const Config>(&probe[0].measurements[0].config, 1), out);
    REQUIRE(std::isfinite(out[0]));  // the model in training predicts
    return calls++ == 3 ? 10.0 : 0.0;  // call 0 scores the untrained model
  };
  TrainReport report;
  train_gnn(testing::pointers(train), {}, small_params(), options, nullptr, &report, favour_third);
  REQUIRE(calls == 6);
  REQUIRE(report.best_epoch == 3);
  REQUIRE(report.best_selection_score == 10.0);
  train_gnn(testing::pointers(train), {}, small_params(), options, nullptr, &report);
  REQUIRE(std::isnan(report.best_selection_score));  // none without a caller's score
}

namespace {

GnnParams hybrid_params() {
  GnnParams params = small_params();
  params.analytical_feature = true;
  params.analytical_device = testing::small_device(true);
  return params;
}

TrainOptions pooled_options(std::vector<double> scales) {
  TrainOptions options = kernel_window_options(3, 4);
  options.epoch_selection = "shared";
  options.correction_scales = std::move(scales);
  options.select_top1_weight = 1.0;
  return options;
}

}  // namespace

TEST_CASE("a hybrid whose correction is shrunk to factor 0 predicts the analytical model, also after a checkpoint") {
  const auto train = testing::synthetic_corpus(5, 31);
  TrainReport report;
  auto model = train_gnn(testing::pointers(train), {}, hybrid_params(), pooled_options({0.0}), nullptr, &report);
  REQUIRE(report.correction_scale == 0.0);
  REQUIRE(report.shared_epoch >= 0);
  REQUIRE(report.shared_epoch <= 3);
  for (const MemberReport& member : report.members) {
    REQUIRE(member.epochs == 3);  // "shared": every epoch runs, patience or not
    REQUIRE(member.best_epoch == report.shared_epoch);
  }
  REQUIRE(std::isfinite(report.pooled_validation_tau));
  AnalyticalModel analytical(*hybrid_params().analytical_device);
  const std::string path = scratch_dir("trainer_shrunk_hybrid") + "/model.json";
  model->save(path);
  auto loaded = GnnCostModel::load(path);
  for (const MeasuredKernel& k : testing::synthetic_corpus(2, 77)) {
    std::vector<Config> configs;
    for (const auto& m : k.measurements) configs.push_back(m.config);
    std::vector<float> shrunk(configs.size()), reloaded(configs.size()), roofline(configs.size());
    model->predict(k.kernel, *k.space, configs, shrunk);
    loaded->predict(k.kernel, *k.space, configs, reloaded);
    analytical.predict(k.kernel, *k.space, configs, roofline);
    REQUIRE(shrunk == roofline);
    REQUIRE(reloaded == roofline);
  }
}

TEST_CASE("shared epoch selection picks one epoch for every member and a factor from the grid") {
  const auto train = testing::synthetic_corpus(5, 31);
  const std::vector<double> grid{0.0, 0.5, 1.0};
  TrainReport report;
  auto model = train_gnn(testing::pointers(train), {}, hybrid_params(), pooled_options(grid), nullptr, &report);
  CAPTURE(report.correction_scale, report.shared_epoch, report.pooled_validation_tau, report.pooled_validation_top1);
  REQUIRE(std::find(grid.begin(), grid.end(), report.correction_scale) != grid.end());
  REQUIRE(report.to_json().at("correction_scale") == report.correction_scale);
  REQUIRE(report.to_json().at("shared_epoch") == report.shared_epoch);
  // The pooled figures are those of the choice: at least as good as the analytical model's
  // (factor 0 or epoch 0, which are candidates) on the same validation kernels.
  TrainReport prior;
  train_gnn(testing::pointers(train), {}, hybrid_params(), pooled_options({0.0}), nullptr, &prior);
  REQUIRE(report.pooled_validation_tau - report.pooled_validation_top1 >=
          prior.pooled_validation_tau - prior.pooled_validation_top1 - 1e-9);
}

TEST_CASE("shrinking needs a hybrid, and a shared epoch takes no caller's selection score") {
  const auto train = testing::synthetic_corpus(5, 31);
  REQUIRE_THROWS_WITH(train_gnn(testing::pointers(train), {}, small_params(), pooled_options({0.5}), nullptr),
                      Catch::Contains("analytical_feature"));
  const SelectionScore anything = [](CostModel&) { return 0.0; };
  REQUIRE_THROWS_WITH(train_gnn(testing::pointers(train), {}, hybrid_params(), pooled_options({0.5}), nullptr, nullptr, anything),
                      Catch::Contains("shared"));
}

namespace {

// An opaque kernel over three generic knobs (2,048 configs) whose runtime is a wide bowl in (a, b)
// plus, only at the bowl's bottom, a per-value jump of up to 6% in c: the bulk's order says nothing
// about which c is fastest, and uniform groups of 32 hold about one bottom config each.
MeasuredKernel bowl_with_fine_bottom() {
  MeasuredKernel measured;
  measured.kernel = Kernel::opaque("fine_bottom", "00000000000000f0");
  measured.device = "synthetic";
  std::vector<std::int64_t> sixteen(16), eight(8);
  for (int i = 0; i < 16; ++i) sixteen[i] = i;
  for (int i = 0; i < 8; ++i) eight[i] = i;
  measured.space = std::make_shared<SearchSpace>(std::vector<Knob>{{"a", sixteen}, {"b", sixteen}, {"c", eight}});
  const double jump[8] = {0.06, 0.00, 0.05, 0.03, 0.06, 0.04, 0.02, 0.05};
  for (std::int64_t a : sixteen)
    for (std::int64_t b : sixteen)
      for (std::int64_t c : eight) {
        const double bowl = 0.02 * double((a - 7) * (a - 7) + (b - 8) * (b - 8));
        const bool bottom = std::abs(a - 7) <= 1 && std::abs(b - 8) <= 1;
        const double log_seconds = -6.0 + bowl + (bottom ? jump[c] : 0.03);
        measured.measurements.push_back({Config{{a, b, c}}, MeasureResult::from_repeats({std::exp(log_seconds)}, 0.0)});
      }
  return measured;
}

// Groups of 32 of its 2,048 configs, 4 per step.
TrainOptions bowl_options(std::uint64_t seed) {
  TrainOptions options = quick_options();
  options.configs_per_kernel = 32;
  options.kernels_per_step = 4;
  options.seed = seed;
  return options;
}

}  // namespace

TEST_CASE("fast groups teach the order at the top that uniform groups miss") {
  const std::vector<MeasuredKernel> kernels{bowl_with_fine_bottom()};
  const auto run = [&](double fast_share, std::uint64_t seed) {
    TrainOptions options = bowl_options(seed);
    options.fast_share = fast_share;
    options.fast_quantile = 0.02;
    auto model = train_gnn(testing::pointers(kernels), {}, small_params(), options, nullptr);
    return ranking_on(*model, kernels).top1_slowdown;
  };
  // Per training seed the first pick is one of a few bottom configs, so the claim is over six:
  // the mean slowdown, and how often the pick is the best config itself.
  double uniform = 0.0, fast = 0.0;
  int uniform_best = 0, fast_best = 0;
  for (std::uint64_t seed = 1; seed <= 6; ++seed) {
    const double u = run(0.0, seed), f = run(0.5, seed);
    uniform += u / 6;
    fast += f / 6;
    uniform_best += u == 0.0 ? 1 : 0;
    fast_best += f == 0.0 ? 1 : 0;
  }
  CAPTURE(uniform, fast, uniform_best, fast_best);
  // Measured: uniform 3.4% and never the best, fast 1.7% and the best on 3 of 6 seeds; on a Zen 4
  // machine of this kind (other BLAS kernels, other rounding) uniform 3.1% and the best on 1,
  // fast 2.6% and the best on 3. The claim is the order, with a level both machines meet.
  REQUIRE(fast < 0.03);
  REQUIRE(fast < uniform);
  REQUIRE(fast_best > uniform_best);
}

TEST_CASE("a group is made to hold a measurement in place of its last draw, once") {
  const MeasuredKernel k = testing::measured_kernel("k", 512, 512, 512);
  REQUIRE(k.measurements.size() >= 12);
  Rng rng(3);
  auto group = sample_group(k.kernel, *k.space, std::span(k.measurements).first(10), 6, rng);
  const std::vector<Config> drawn = group.configs;
  const Measurement& outside = k.measurements[11];
  hold_in_group(group, outside);
  REQUIRE(group.configs.size() == 6);
  REQUIRE(std::equal(drawn.begin(), drawn.end() - 1, group.configs.begin()));
  REQUIRE((group.configs.back() == outside.config));
  REQUIRE(group.log_seconds.back() == Approx(std::log(outside.result.seconds)));
  const auto held = group;
  hold_in_group(group, outside);  // held already: unchanged
  REQUIRE((group.configs == held.configs));
  GnnCostModel::State::Group empty{&k.kernel, k.space.get(), {}, {}};
  hold_in_group(empty, outside);
  REQUIRE(empty.configs.empty());
}

TEST_CASE("groups holding the tiling config fit it where uniform groups smooth it away") {
  // The bowl kernel with one mid-slope config, the "tiling", 2x faster than its neighbours: a
  // uniform group of 32 of 2,048 holds it about once in 64 draws, and a holdout may take it.
  MeasuredKernel kernel = bowl_with_fine_bottom();
  const Config tiling_config{{3, 12, 5}};
  double measured = 0.0;  // the spike's log seconds
  for (Measurement& m : kernel.measurements)
    if (m.config == tiling_config) {
      m.result = MeasureResult::from_repeats({m.result.seconds / 2}, 0.0);
      measured = std::log(m.result.seconds);
    }
  REQUIRE(measured != 0.0);
  const std::vector<MeasuredKernel> kernels{kernel};
  ProgramTraining programs{{}, [&](const Kernel&) { return std::pair{kernel.space, tiling_config}; }};
  const auto error = [&](bool tiling_in_groups, std::uint64_t seed) {
    TrainOptions options = bowl_options(seed);
    options.tiling_in_groups = tiling_in_groups;
    options.loss.mse = 1.0;  // as the Halide studies train: runtimes, not only their order
    std::ostringstream progress;
    auto model = train_gnn(testing::pointers(kernels), {}, small_params(), options, &progress, nullptr, {}, &programs);
    CAPTURE(progress.str());
    if (tiling_in_groups) REQUIRE(progress.str().find("1 of 1 training kernels hold their tiling config") != std::string::npos);
    float predicted = 0;
    model->predict(kernel.kernel, *kernel.space, std::span(&tiling_config, 1), std::span(&predicted, 1));
    return std::abs(predicted - measured);
  };
  double uniform = 0.0, held = 0.0;
  for (std::uint64_t seed = 1; seed <= 3; ++seed) {
    const double u = error(false, seed), h = error(true, seed);
    CAPTURE(seed, u, h);
    REQUIRE(h < u);
    uniform += u / 3;
    held += h / 3;
  }
  // Measured (log error): uniform 0.74-0.77 on every seed, i.e. the spike smoothed away
  // entirely; held 0.51-0.55. The small test network fits a one-config spike only partly.
  CAPTURE(uniform, held);
  REQUIRE(held < 0.8 * uniform);
}

TEST_CASE("groups holding the tiling config need the tiling") {
  const auto train = testing::synthetic_corpus(2, 41);
  TrainOptions options = quick_options();
  options.tiling_in_groups = true;
  REQUIRE_THROWS_WITH(train_gnn(testing::pointers(train), {}, small_params(), options, nullptr),
                      Catch::Contains("tiling_in_groups"));
}
