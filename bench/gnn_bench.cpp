// Benchmark of the learned model (not a test): configs scored per second with late and early
// join on a 20-node and a 100-node kernel, training samples per second, and peak memory.
// Floors on the 2-core development machine (issue 5): 100,000 configs/s late join and 2,000
// configs/s early join on the 100-node kernel.
// With configs/hardware/host.json under the working directory it also scores the hybrid model
// (GnnParams::analytical_feature: the analytical model's estimate of every config joins its features).
// An ensemble (TrainOptions::ensemble) is scored too: features are computed once per batch and
// each member runs its own head, so it should cost less than members x one model.
//   build/bench/gnn_bench [--seconds S] [--threads T]
#include <sys/resource.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "ir/device_spec.h"
#include "ir/knob_roles.h"
#include "ir/random.h"
#include "surrogate/gnn/gnn_cost_model.h"
#include "surrogate/training/torch_threads.h"
#include "surrogate/training/trainer.h"

using namespace perftune;

namespace {

using Clock = std::chrono::steady_clock;
constexpr const char* kHybridSpec = "configs/hardware/host.json";
// The ensemble size the shipped TPU configs use (configs/eval/tpu_leave_one_out.json).
constexpr int kBenchEnsemble = 5;

// A random DAG kernel of `nodes` ops over [1024, 1024] f32 tensors: a few parameters, then ops whose
// operands are drawn from the previous 8 ops (local structure, as in fused XLA kernels).
Kernel random_kernel(std::size_t nodes, std::uint64_t seed) {
  Rng rng(seed);
  const std::vector<std::string> opcodes{"add", "multiply", "exponential", "maximum", "dot", "reduce", "broadcast",
                                         "subtract", "divide", "tanh", "convert", "select"};
  Program p("bench" + std::to_string(nodes));
  std::vector<OpId> ids;
  const std::size_t parameters = std::max<std::size_t>(2, nodes / 10);
  for (std::size_t i = 0; i < parameters; ++i) {
    Op op{.name = "p" + std::to_string(i), .opcode = "parameter", .shape = make_shape(ElementType::kF32, {1024, 1024})};
    op.parameter_number = static_cast<std::int64_t>(i);
    ids.push_back(p.add_op(op));
  }
  while (ids.size() < nodes) {
    const std::string& opcode = opcodes[uniform_index(rng, opcodes.size())];
    Op op{.name = "op" + std::to_string(ids.size()), .opcode = opcode, .shape = make_shape(ElementType::kF32, {1024, 1024})};
    if (opcode == "dot") op.dot = DotDims{{1}, {0}, {}, {}};
    if (opcode == "reduce") op.dimensions = {1};
    const std::size_t arity = opcode == "exponential" || opcode == "tanh" || opcode == "convert" || opcode == "broadcast" ||
                                      opcode == "reduce" ? 1 : 2;
    std::vector<OpId> operands;
    for (std::size_t a = 0; a < arity; ++a) {
      const std::size_t window = std::min<std::size_t>(8, ids.size());
      operands.push_back(ids[ids.size() - 1 - uniform_index(rng, window)]);
    }
    ids.push_back(p.add_op(op, operands));
  }
  return Kernel(p.name(), std::move(p));
}

SearchSpace tile_space() {
  std::vector<std::int64_t> tiles;
  for (std::int64_t t = 8; t <= 1024; t += 8) tiles.push_back(t);  // 128 x 128 = 16,384 configs
  return SearchSpace({{tile_out_knob(0), tiles}, {tile_out_knob(1), tiles}});
}

double peak_rss_mib() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;  // Linux reports KiB
}

// Configs scored per second: repeated batched predict() calls for at least `seconds`.
double configs_per_second(GnnCostModel& model, const Kernel& kernel, const SearchSpace& space,
                          const std::vector<Config>& configs, double seconds) {
  std::vector<float> out(configs.size());
  model.predict(kernel, space, configs, out);  // warm: features, graph tensors, embedding
  for (float v : out)
    if (!std::isfinite(v)) throw std::runtime_error("non-finite prediction");
  std::size_t scored = 0;
  const auto start = Clock::now();
  double elapsed = 0.0;
  do {
    model.predict(kernel, space, configs, out);
    scored += configs.size();
    elapsed = std::chrono::duration<double>(Clock::now() - start).count();
  } while (elapsed < seconds);
  return static_cast<double>(scored) / elapsed;
}

MeasuredKernel measured(const Kernel& kernel, const SearchSpace& space, std::size_t count, Rng& rng) {
  MeasuredKernel m;
  m.kernel = kernel;
  m.space = std::make_shared<SearchSpace>(space);
  for (std::size_t i = 0; i < count; ++i) {
    Config c = space.sample(rng);
    const double tiles = std::ceil(1024.0 / c.values[0]) * std::ceil(1024.0 / c.values[1]);
    m.measurements.push_back({c, MeasureResult::from_repeats({1e-6 * (tiles + c.values[0] * c.values[1] / 64.0)}, 0.0)});
  }
  return m;
}

}  // namespace

int main(int argc, char** argv) {
  double seconds = 2.0;
  int threads = 0;  // 0: one per core
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], "--seconds") == 0) seconds = std::atof(argv[i + 1]);
    if (std::strcmp(argv[i], "--threads") == 0) threads = std::atoi(argv[i + 1]);
  }
  configure_torch_threads(threads);
  const SearchSpace space = tile_space();
  const std::vector<Config> all = space.enumerate();
  const std::vector<Config> early_batch(all.begin(), all.begin() + 1024);
  std::printf("%-10s %-6s %14s\n", "kernel", "join", "configs/s");
  for (std::size_t nodes : {20, 100}) {
    const Kernel kernel = random_kernel(nodes, nodes);
    for (const std::string join : {"late", "early"}) {
      GnnParams params;  // TpuGraphs defaults: 3 layers, width 64, embedding 64
      params.join = join;
      GnnCostModel model(params, FeatureVocabulary{}, TrainOptions{});
      const double rate = configs_per_second(model, kernel, space, join == "late" ? all : early_batch, seconds);
      std::printf("%-10s %-6s %14.0f\n", (std::to_string(nodes) + "-node").c_str(), join.c_str(), rate);
    }
    for (const std::string join : {"late", "early"}) {
      GnnParams params;
      params.join = join;
      TrainOptions options;
      options.ensemble = kBenchEnsemble;
      GnnCostModel model(params, FeatureVocabulary{}, options);
      const double rate = configs_per_second(model, kernel, space, join == "late" ? all : early_batch, seconds);
      std::printf("%-10s %-6s %14.0f  (ensemble of %d)\n", (std::to_string(nodes) + "-node").c_str(), join.c_str(), rate,
                  kBenchEnsemble);
    }
    if (std::filesystem::exists(kHybridSpec)) try {
      GnnParams params;
      params.analytical_feature = true;
      params.analytical_device = load_device_spec(kHybridSpec);
      GnnCostModel model(params, FeatureVocabulary{}, TrainOptions{});
      const double rate = configs_per_second(model, kernel, space, all, seconds);
      std::printf("%-10s %-6s %14.0f  (hybrid: + analytical estimates, %s)\n", (std::to_string(nodes) + "-node").c_str(),
                  "late", rate, kHybridSpec);
    } catch (const std::exception& error) {
      std::printf("%-10s %-6s %14s  (hybrid: %s)\n", (std::to_string(nodes) + "-node").c_str(), "late", "n/a", error.what());
    }
  }
  // Training throughput: configs forwarded and back-propagated per second (default options).
  Rng rng(7);
  std::vector<MeasuredKernel> corpus;
  for (std::size_t i = 0; i < 8; ++i) corpus.push_back(measured(random_kernel(20 + 10 * i, 100 + i), space, 256, rng));
  std::vector<const MeasuredKernel*> train;
  for (const auto& k : corpus) train.push_back(&k);
  for (const std::string join : {"late", "early"}) {
    GnnParams params;
    params.join = join;
    TrainOptions options;
    options.epochs = 2;
    options.steps_per_epoch = 20;
    TrainReport report;
    (void)train_gnn(train, {}, params, options, nullptr, &report);
    std::printf("training (%s join, 20-90 nodes): %.0f samples/s (%zu samples in %.2f s)\n", join.c_str(),
                static_cast<double>(report.samples) / report.seconds, report.samples, report.seconds);
  }
  std::printf("peak memory: %.1f MiB\n", peak_rss_mib());
  return 0;
}
