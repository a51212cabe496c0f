// fusion_scoring_bench: what scoring one fusion config of a program costs, the way the CPU fusion
// study (perftune eval, surrogate/fusion/fusion_evaluation.h) and a fusion search (the analytical model
// on a fusion space) do it. Each figure is printed next to the scoring before the fused-kernel
// cache (surrogate/fusion/fused_kernel_cache.h), reproduced here from its public parts: partition() of
// the whole program per config, each distinct kernel estimated once per call. Not part of ctest.
//
//   build/bench/fusion_scoring_bench [--configs N] [--repeats R] [--spec configs/hardware/host.json]
//                                    [--programs configs/programs]
//
// Per bundled program: microseconds per config of
//   eval sum       predict_program_seconds() with the analytical model and the CPU backend's tiles
//                  (cli/cpu_tiling.h) over N sampled legal configs, one call (a fresh cache)
//   fusion space   AnalyticalModel::predict() on the program's fusion space, N configs in one call
//                  on a fresh model (cold) and again on the same model (warm: kernels kept)
// and, as the reference, both before the cache.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include "cli/cpu_tiling.h"
#include "hardware/halide/fusion_space.h"
#include "ir/device_spec.h"
#include "ir/fusion.h"
#include "ir/knob_roles.h"
#include "ir/program_json.h"
#include "surrogate/analytical/analytical_model.h"
#include "surrogate/fusion/fusion_evaluation.h"

namespace perftune {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// The best (lowest) of `repeats` timings of `run`, in microseconds per config: the minimum is the
// figure least disturbed by the other jobs sharing this machine's two cores.
template <class Run>
double best_us_per_config(int repeats, std::size_t configs, Run&& run) {
  double best = INFINITY;
  for (int r = 0; r < repeats; ++r) {
    const auto start = Clock::now();
    run();
    best = std::min(best, seconds_since(start));
  }
  return 1e6 * best / static_cast<double>(configs);
}

FusionConfig fusion_of(const Program& program, const std::vector<KnobInfo>& roles, const Config& config) {
  FusionConfig fusion = FusionConfig::none(program);
  for (std::size_t e : read_tiles(roles, config, 0).fused_edges)
    if (e < fusion.fused.size()) fusion.fused[e] = true;
  return fusion;
}

// Program sums before the cache: partition() per config, `seconds_of` once per new kernel key
// within the call (both predict_program_seconds() and the analytical model's fusion scorer did so).
std::vector<double> sums_before(const Program& program, const SearchSpace& space, const std::vector<Config>& configs,
                                const std::function<double(const Kernel&)>& seconds_of) {
  const auto roles = knob_roles(space);
  std::unordered_map<std::string, double> seconds;
  std::vector<double> out;
  for (const Config& config : configs) {
    double total = 0.0;
    for (const FusedKernel& fused : partition(program, fusion_of(program, roles, config)).kernels) {
      auto it = seconds.find(fused.kernel.key());
      if (it == seconds.end()) it = seconds.emplace(fused.kernel.key(), seconds_of(fused.kernel)).first;
      total += it->second;
    }
    out.push_back(total);
  }
  return out;
}

// predict_program_seconds()'s term: the model's prediction under the CPU backend's tiles.
double tiled_prediction(CostModel& model, const Kernel& kernel) {
  const auto [tile_space, tile] = cli::cpu_default_tiling(kernel);
  float log_seconds = 0.0f;
  model.predict(kernel, *tile_space, std::span<const Config>(&tile, 1), std::span<float>(&log_seconds, 1));
  return std::exp(static_cast<double>(log_seconds));
}

bool same(const std::vector<double>& a, const std::vector<double>& b, double relative) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (std::abs(a[i] - b[i]) > relative * std::abs(b[i])) return false;
  return true;
}

}  // namespace
}  // namespace perftune

int main(int argc, char** argv) {
  using namespace perftune;
  std::size_t count = 256;
  int repeats = 5;
  std::string spec_path = "configs/hardware/host.json", programs_dir = "configs/programs";
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--configs")) count = std::strtoul(argv[i + 1], nullptr, 10);
    else if (!std::strcmp(argv[i], "--repeats")) repeats = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--spec")) spec_path = argv[i + 1];
    else if (!std::strcmp(argv[i], "--programs")) programs_dir = argv[i + 1];
  }
  const DeviceSpec spec = load_device_spec(spec_path);
  std::vector<std::string> paths;
  for (const auto& entry : std::filesystem::directory_iterator(programs_dir))
    if (entry.path().extension() == ".json") paths.push_back(entry.path().string());
  std::sort(paths.begin(), paths.end());
  std::printf("us per fusion config (best of %d runs of %zu sampled legal configs; shared 2-core machine)\n", repeats, count);
  std::printf("%-26s %5s | %10s %10s | %10s %10s %10s\n", "program", "edges", "eval before", "eval now",
              "space before", "space cold", "space warm");
  double sums[5] = {0, 0, 0, 0, 0};
  for (const std::string& path : paths) {
    const Program program = load_program_file(path);
    const Kernel whole(program.name(), program);
    const SearchSpace space = fusion_space(program);
    Rng rng(11);
    std::vector<Config> configs;
    for (std::size_t i = 0; i < count; ++i) configs.push_back(space.sample(rng));
    const MeasuredKernel measured{whole, std::make_shared<SearchSpace>(space), "cpu", {}, std::nullopt};

    AnalyticalModel model(spec);
    std::vector<double> eval_before, eval_now;
    const double eval_before_us =
        best_us_per_config(repeats, count, [&] {
          eval_before = sums_before(program, space, configs, [&](const Kernel& k) { return tiled_prediction(model, k); });
        });
    const double eval_now_us = best_us_per_config(repeats, count, [&] {
      eval_now = predict_program_seconds(model, measured, configs, cli::cpu_default_tiling);
    });

    std::vector<double> space_before;
    const double space_before_us =
        best_us_per_config(repeats, count, [&] {
          space_before = sums_before(program, space, configs, [&](const Kernel& k) { return model.estimate_auto(k).seconds; });
        });
    std::vector<float> log_seconds(configs.size());
    double cold_us = INFINITY;
    for (int r = 0; r < repeats; ++r) {
      AnalyticalModel fresh(spec);
      cold_us = std::min(cold_us, best_us_per_config(1, count, [&] { fresh.predict(whole, space, configs, log_seconds); }));
    }
    const double warm_us = best_us_per_config(repeats, count, [&] { model.predict(whole, space, configs, log_seconds); });
    std::vector<double> space_now;
    for (float l : log_seconds) space_now.push_back(std::exp(static_cast<double>(l)));

    // The cache must not change a score: sums are exact; the fusion space passes through a float log.
    if (eval_now != eval_before || !same(space_now, space_before, 1e-6)) {
      std::fprintf(stderr, "%s: cached scores differ from partition()'s\n", path.c_str());
      return 1;
    }
    std::printf("%-26s %5zu | %10.1f %10.1f | %10.1f %10.1f %10.1f\n", program.name().c_str(), space.dimension(),
                eval_before_us, eval_now_us, space_before_us, cold_us, warm_us);
    const double figures[5] = {eval_before_us, eval_now_us, space_before_us, cold_us, warm_us};
    for (int f = 0; f < 5; ++f) sums[f] += figures[f] / static_cast<double>(paths.size());
  }
  std::printf("%-26s %5s | %10.1f %10.1f | %10.1f %10.1f %10.1f\n", "mean", "", sums[0], sums[1], sums[2], sums[3], sums[4]);
  return 0;
}
