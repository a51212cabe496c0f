#include <cmath>
#include <random>

#include <catch2/catch.hpp>

#include "ir/fusion.h"
#include "ir/knob_roles.h"
#include "ir/program_json.h"
#include "surrogate/fusion/fusion_evaluation.h"
#include "surrogate/training/trainer.h"
#include "synthetic_kernels.h"
#include "test_support.h"

using namespace perftune;

namespace {

// A cost model whose log seconds are log(1e-6 * number of ops in the kernel): program runtime
// sums are then easy to check by hand.
class OpCountModel : public CostModel {
 public:
  std::string name() const override { return "op-count"; }
  void predict(const Kernel& kernel, const SearchSpace&, std::span<const Config> configs, std::span<float> out) override {
    for (std::size_t i = 0; i < configs.size(); ++i) out[i] = static_cast<float>(std::log(1e-6 * double(kernel.body().size())));
  }
};

// Log seconds: log(1e-6 x (1 + the sum of the config's fuse.<e> values)): a kernel with a producer
// inlined (1) or per tile (2) is predicted apart from one with it at root (0).
class PlacementModel : public CostModel {
 public:
  std::string name() const override { return "placement"; }
  void predict(const Kernel&, const SearchSpace& space, std::span<const Config> configs, std::span<float> out) override {
    const auto roles = knob_roles(space);
    for (std::size_t i = 0; i < configs.size(); ++i) {
      double sum = 1.0;
      for (std::size_t k = 0; k < roles.size(); ++k)
        if (roles[k].role == KnobRole::kFuse) sum += static_cast<double>(configs[i].values[k]);
      out[i] = static_cast<float>(std::log(1e-6 * sum));
    }
  }
};

}  // namespace

TEST_CASE("a fused kernel is predicted with its producers placed as the program config places them") {
  // a -> b -> c: fusing both edges makes one kernel whatever the placements (1 inlined, 2 per
  // tile); the kernel's own fuse knobs carry them to the model.
  const Program program = load_program_file(source_path("configs/programs/mlp_block_tiny.json"));
  MeasuredKernel measured = testing::fusion_measurements(program);
  std::vector<Knob> knobs = measured.space->knobs();
  for (Knob& knob : knobs) knob.values = {0, 1, 2};
  measured.space = std::make_shared<const SearchSpace>(knobs);
  // Each kernel scheduled over its own fuse knobs, all at root unless the program says otherwise.
  const KernelTiling tiling = [](const Kernel& kernel) {
    std::vector<Knob> own;
    for (std::size_t e = 0; e < kernel.body().edges().size(); ++e)
      if (is_fusible(kernel.body(), kernel.body().edges()[e])) own.push_back({fuse_knob(e), {0, 1, 2}});
    Config root;
    root.values.assign(own.size(), 0);
    return std::make_pair(std::make_shared<const SearchSpace>(own), root);
  };
  const Config all_inlined{std::vector<std::int64_t>(knobs.size(), 1)}, all_per_tile{std::vector<std::int64_t>(knobs.size(), 2)};
  PlacementModel model;
  const std::vector<Config> configs = {all_inlined, all_per_tile};
  const auto predicted = predict_program_seconds(model, measured, configs, tiling);
  // The same partition, told apart by the placements alone; without fuse knobs in the kernels'
  // schedules the two would tie.
  CHECK(predicted[1] > predicted[0] * 1.2);
  const auto unplaced = predict_program_seconds(model, measured, configs, untiled);
  CHECK(unplaced[0] == unplaced[1]);
}

TEST_CASE("program runtime is predicted as the sum of its kernels' predictions") {
  const Program program = load_program_file(source_path("configs/programs/mlp_block_small.json"));
  const MeasuredKernel measured = testing::fusion_measurements(program);
  REQUIRE(is_fusion_space(measured));
  REQUIRE(measured.measurements.size() >= 5);
  OpCountModel model;
  std::vector<Config> configs;
  for (const auto& m : measured.measurements) configs.push_back(m.config);
  const auto predicted = predict_program_seconds(model, measured, configs, untiled);
  for (std::size_t i = 0; i < configs.size(); ++i) {
    CAPTURE(i);
    REQUIRE(predicted[i] == Approx(measured.measurements[i].result.seconds).epsilon(1e-5));
  }
  // The op-count model is exact here, so it ranks perfectly and has no error.
  const auto scores = score_fusion(model, measured, untiled);
  REQUIRE(scores);
  REQUIRE(scores->mape == Approx(0.0).margin(1e-5));
  REQUIRE(scores->top1_slowdown == Approx(0.0).margin(1e-9));
}

TEST_CASE("summed predictions equal those over partition()'s kernels, each kernel built once, term by term") {
  // predict_program_seconds() keeps each fused kernel across configs (FusedKernelCache); the sums
  // must be partition()'s, term by term in its order.
  const Program program = load_program_file(source_path("configs/programs/transformer_block_small.json"));
  MeasuredKernel measured = testing::fusion_measurements(program);
  std::vector<Config> configs;
  for (const auto& m : measured.measurements) configs.push_back(m.config);
  std::mt19937_64 rng(9);
  const auto edges = fusible_edges(program);
  std::vector<FusionConfig> fusions;
  while (fusions.size() < 20) {
    FusionConfig fusion = FusionConfig::none(program);
    for (std::size_t e : edges) fusion.fused[e] = rng() % 3 == 0;
    if (!is_legal(program, fusion)) continue;
    Config config;
    for (std::size_t e : edges) config.values.push_back(fusion.fused[e] ? 1 : 0);
    configs.push_back(config);
    fusions.push_back(fusion);
  }
  OpCountModel model;
  const auto predicted = predict_program_seconds(model, measured, configs, untiled);
  // The breakdown `perftune eval --fusion-breakdown` prints holds the same terms, kernel by kernel.
  const auto breakdown = predict_program_kernels(model, measured, configs, untiled);
  REQUIRE(breakdown.size() == configs.size());
  for (std::size_t i = 0; i < fusions.size(); ++i) {
    CAPTURE(i);
    const std::vector<KernelPrediction>& terms = breakdown[measured.measurements.size() + i];
    const auto kernels = partition(program, fusions[i]).kernels;
    REQUIRE(terms.size() == kernels.size());
    double expected = 0.0;
    for (std::size_t k = 0; k < kernels.size(); ++k) {
      const auto [space, tile] = untiled(kernels[k].kernel);
      float log_seconds = 0.0f;
      model.predict(kernels[k].kernel, *space, std::span<const Config>(&tile, 1), std::span<float>(&log_seconds, 1));
      expected += std::exp(static_cast<double>(log_seconds));
      CHECK(terms[k].name == kernels[k].kernel.name());
      CHECK(terms[k].seconds == std::exp(static_cast<double>(log_seconds)));
    }
    REQUIRE(predicted[measured.measurements.size() + i] == expected);
  }
}

TEST_CASE("untiled gives one full-extent tile per output dimension") {
  const Kernel kernel = testing::small_kernel("k", 64, 32, 16);
  const auto [space, config] = untiled(kernel);
  REQUIRE(space->knob_names() == std::vector<std::string>{"tile.out.0", "tile.out.1"});
  REQUIRE(config.values == std::vector<std::int64_t>{64, 32});
}

TEST_CASE("a learned model scores a held-out program's fusion configs") {
  const Program program = load_program_file(source_path("configs/programs/mlp_block_small.json"));
  const MeasuredKernel measured = testing::fusion_measurements(program);
  const auto train = testing::synthetic_corpus(3, 12);
  TrainOptions options;
  options.epochs = 2;
  options.steps_per_epoch = 5;
  GnnParams params;
  params.hidden = 16;
  params.opcode_embedding = 8;
  auto model = train_gnn(testing::pointers(train), {}, params, options, nullptr);
  const auto scores = score_fusion(*model, measured, untiled);
  REQUIRE(scores);
  REQUIRE(std::isfinite(scores->kendall_tau));
  REQUIRE(std::isfinite(scores->mape));
}
