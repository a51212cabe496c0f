// Training through the fusion task's sum (TrainOptions::program_weight): the sum groups a step
// draws, and what training on them does.
#include <algorithm>
#include <cmath>
#include <sstream>

#include "ir/source.h"
#include "surrogate/evaluation/ranking_metrics.h"
#include "surrogate/fusion/fusion_evaluation.h"
#include "surrogate/gnn/gnn_state.h"
#include "surrogate/training/program_sum_sampler.h"
#include "surrogate/training/trainer.h"
#include "synthetic_kernels.h"
#include "test_support.h"

#include <catch2/catch.hpp>  // after libtorch's headers: its glog CHECK would replace Catch's

using namespace perftune;

namespace {

// The generated corpus sample: single-op kernels under schedules and three programs under 18
// fusion placements each.
struct Sample {
  Corpus corpus = load_source(source_path("tests/fixtures/halide_generated_sample.jsonl"));
  std::vector<const MeasuredKernel*> kernels;
  ProgramTraining programs{{}, untiled};
  Sample() {
    for (const MeasuredKernel& k : corpus.kernels) (is_fusion_space(k) ? programs.programs : kernels).push_back(&k);
  }
};

TrainOptions sum_options(double program_weight) {
  TrainOptions options;
  options.epochs = 2;
  options.steps_per_epoch = 4;
  options.kernels_per_step = 2;
  options.configs_per_kernel = 8;
  options.loss.mse = 1.0;  // as the shipped configs train: the sums need absolute runtimes
  options.program_weight = program_weight;
  options.seed = 3;
  return options;
}

}  // namespace

TEST_CASE("a sum group predicts each placement as the sum of its kernels, as the fusion task does") {
  Sample sample;
  REQUIRE(sample.programs.programs.size() == 3);
  auto model = train_gnn(sample.kernels, {}, testing::small_gnn_params(16, 8, "late"), sum_options(1.0), nullptr);
  ProgramSampler sampler(sample.programs);
  REQUIRE(sampler.size() == 3);
  Rng rng(5);
  // More placements than a program has: all of them, each once.
  const GnnCostModel::State::SumGroup group = sampler.sample(1000, rng);
  REQUIRE(group.placements.size() == 18);
  std::size_t referenced = 0;
  for (const auto& placement : group.placements) referenced += placement.size();
  CHECK(group.terms.size() < referenced);  // placements share kernel schedules, each one term
  torch::Tensor summed = model->state().forward_sum(group, 0).detach();
  std::vector<double> from_group(group.placements.size());
  for (std::size_t p = 0; p < from_group.size(); ++p) from_group[p] = std::exp(summed[static_cast<std::int64_t>(p)].item<double>());
  // The program the sampler drew, identified by its measured times.
  std::vector<float> group_log_seconds = group.log_seconds;
  std::sort(group_log_seconds.begin(), group_log_seconds.end());
  const MeasuredKernel* drawn = nullptr;
  for (const MeasuredKernel* program : sample.programs.programs) {
    std::vector<float> log_seconds;
    for (double s : ok_configs(*program).seconds) log_seconds.push_back(static_cast<float>(std::log(s)));
    std::sort(log_seconds.begin(), log_seconds.end());
    if (log_seconds == group_log_seconds) drawn = program;
  }
  const auto [configs, seconds] = ok_configs(*drawn);
  std::vector<double> from_eval = predict_program_seconds(*model, *drawn, configs, untiled);
  std::sort(from_group.begin(), from_group.end());
  std::sort(from_eval.begin(), from_eval.end());
  for (std::size_t p = 0; p < from_eval.size(); ++p) CHECK(from_group[p] == Approx(from_eval[p]).epsilon(1e-4));
}

TEST_CASE("steps on a sum group fit its placements' measured runtimes") {
  Sample sample;
  std::ostringstream progress;
  auto model = train_gnn(sample.kernels, {}, testing::small_gnn_params(16, 8, "late"), sum_options(1.0), &progress, nullptr, {},
                         &sample.programs);
  CHECK(progress.str().find("training through the sums of 3 programs' placements") != std::string::npos);
  ProgramSampler sampler(sample.programs);
  Rng rng(7);
  const GnnCostModel::State::SumGroup group = sampler.sample(8, rng);
  REQUIRE(group.placements.size() == 8);
  GnnCostModel::State& state = model->state();
  const double before = state.backward({}, 0, {group});
  double after = before;
  for (int step = 0; step < 100; ++step) after = state.train_step({}, 0, {group});
  CAPTURE(before, after);
  // The gradient reaches the kernels' predictions through the sums: the loss of the sums falls
  // (10.4 -> 8.1 here; the model's only training was 8 steps, so the pace depends on its start).
  CHECK(after < 0.85 * before);
  // Off, the same step leaves the sums out.
  state.options.program_weight = 0.0;
  CHECK(state.backward({}, 0, {group}) == 0.0);
}
