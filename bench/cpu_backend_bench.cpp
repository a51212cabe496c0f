// CPU backend figures on this machine (not a unit test; run by hand, see hardware/README.md):
//   matmul  1024x1024x1024 f32: fastest and slowest of N random valid tile configs, a naive
//           i-j-k loop compiled with the same flags, and OpenBLAS sgemm through torch::matmul,
//           all single-threaded (our kernels use one core; torch is set to 1 thread to match,
//           and to 2 threads as a second line for reference).
//   chain   4 cheap elementwise ops on 16M elements (memory-bound): every edge fused vs none.
//           (With tanh in the chain, libm's scalar tanhf dominates and fusion changes little.)
//   noise   one config measured in separate runner processes: spread of their medians.
//
// build/bench/cpu_backend_bench [matmul|chain|noise|all] [--configs N] [--seed S]
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <numeric>
#include <set>
#include <string>
#include <vector>

#include "hardware/cpu_backend.h"
#include "hardware/cpu_tile_space.h"
#include "hardware/fusion_space.h"
#include "ir/fusion.h"
#include "ir/json_view.h"
#include "ir/program_json.h"

using namespace perftune;

namespace {

constexpr std::int64_t kSize = 1024;
constexpr std::int64_t kChainElements = std::int64_t{1} << 24;  // 16M

Program parse(const std::string& text) {
  const nlohmann::json json = parse_json_text(text, "bench program");
  return program_from_json(JsonView(json, "bench program"));
}

Program matmul_program() {
  const std::string n = std::to_string(kSize);
  return parse(R"({"name": "matmul_1024", "ops": [
    {"name": "a", "opcode": "parameter", "shape": [)" + n + "," + n + R"(], "parameter_number": 0},
    {"name": "b", "opcode": "parameter", "shape": [)" + n + "," + n + R"(], "parameter_number": 1},
    {"name": "c", "opcode": "dot", "operands": ["a", "b"], "shape": [)" + n + "," + n + R"(],
     "dot": {"lhs_contracting": [1], "rhs_contracting": [0]}}]})");
}

CpuBackendOptions bench_options() {
  CpuBackendOptions options;
  options.run_timeout_seconds = 30;  // the slowest tilings of a 2 GFLOP kernel take seconds per call
  options.min_repeats = 3;
  options.max_repeats = 10;
  options.time_budget_seconds = 2;
  return options;
}

double gflops(double seconds) { return 2.0 * kSize * kSize * kSize / seconds / 1e9; }

double torch_matmul_seconds(int threads) {
  torch::set_num_threads(threads);
  torch::manual_seed(1);
  const auto a = torch::rand({kSize, kSize}), b = torch::rand({kSize, kSize});
  auto c = torch::matmul(a, b);  // warm-up
  std::vector<double> times;
  for (int r = 0; r < 10; ++r) {
    const auto start = std::chrono::steady_clock::now();
    c = torch::matmul(a, b);
    times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

void bench_matmul(std::size_t count, std::uint64_t seed) {
  const Program program = matmul_program();
  const Kernel kernel("matmul_1024", program);
  const SearchSpace space = cpu_tile_space(kernel);
  Rng rng(seed);
  std::vector<Config> configs = {default_tile_config(kernel, space)};
  std::set<Config> seen(configs.begin(), configs.end());
  while (configs.size() < count)
    if (Config c = space.sample(rng); seen.insert(c).second) configs.push_back(c);
  std::printf("matmul %lldx%lldx%lld f32, %zu tile configs (of %llu valid), device %s\n", (long long)kSize, (long long)kSize,
              (long long)kSize, configs.size(), (unsigned long long)space.size().value_or(0), CpuBackend(bench_options()).fingerprint().c_str());
  CpuBackend backend(bench_options());
  const auto start = std::chrono::steady_clock::now();
  const auto results = backend.measure(kernel, space, configs);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::size_t best = 0, worst = 0, ok = 0;
  std::map<std::string, int> statuses;
  for (std::size_t i = 0; i < results.size(); ++i) {
    ++statuses[std::string(status_name(results[i].status))];
    if (!results[i].ok()) continue;
    if (ok++ == 0 || results[i].seconds < results[best].seconds) best = i;
    if (ok == 1 || results[i].seconds > results[worst].seconds) worst = i;
  }
  for (const auto& [status, n] : statuses) std::printf("  %s: %d\n", status.c_str(), n);
  if (ok == 0) return;
  std::printf("  measured in %.1f s\n", wall);
  std::printf("  default %-48s %9.2f ms  %6.2f GFLOP/s\n", space.to_json(configs[0]).dump().c_str(), results[0].seconds * 1e3, gflops(results[0].seconds));
  std::printf("  fastest %-48s %9.2f ms  %6.2f GFLOP/s  cv %.2f%%\n", space.to_json(configs[best]).dump().c_str(), results[best].seconds * 1e3,
              gflops(results[best].seconds), results[best].spread * 100);
  std::printf("  slowest %-48s %9.2f ms  %6.2f GFLOP/s\n", space.to_json(configs[worst]).dump().c_str(), results[worst].seconds * 1e3, gflops(results[worst].seconds));
  std::printf("  slowest / fastest = %.1fx\n", results[worst].seconds / results[best].seconds);

  // A naive i-j-k loop, compiled by the same backend with the same flags (it replaces the
  // generated source, so it is checked against the same reference).
  CpuBackendOptions naive_options = bench_options();
  const std::string n = std::to_string(kSize);
  naive_options.transform_source = [n](const std::string&) {
    return "extern \"C\" void perftune_entry(float* const* b) {\n"
           "  const float* a = b[0]; const float* w = b[1]; float* c = b[2];\n"
           "  for (long i = 0; i < " + n + "; ++i)\n    for (long j = 0; j < " + n + "; ++j) {\n"
           "      float s = 0.0f;\n      for (long k = 0; k < " + n + "; ++k) s += a[i * " + n + " + k] * w[k * " + n + " + j];\n"
           "      c[i * " + n + " + j] = s;\n    }\n}\n";
  };
  CpuBackend naive(naive_options);
  const auto naive_result = naive.measure(kernel, space, std::vector<Config>{configs[0]});
  if (naive_result[0].ok())
    std::printf("  naive i-j-k loop %42s %9.2f ms  %6.2f GFLOP/s  (fastest is %.1fx faster)\n", "", naive_result[0].seconds * 1e3,
                gflops(naive_result[0].seconds), naive_result[0].seconds / results[best].seconds);
  else
    std::printf("  naive i-j-k loop: %s %s\n", std::string(status_name(naive_result[0].status)).c_str(), naive_result[0].message.c_str());
  for (int threads : {1, 2}) {
    const double t = torch_matmul_seconds(threads);
    std::printf("  torch::matmul (OpenBLAS sgemm), %d thread%s %26s %9.2f ms  %6.2f GFLOP/s  (best tile config reaches %.0f%%)\n", threads,
                threads == 1 ? " " : "s", "", t * 1e3, gflops(t), 100.0 * t / results[best].seconds);
  }
}

void bench_chain() {
  const std::string n = std::to_string(kChainElements);
  const Program program = parse(R"({"name": "chain4", "ops": [
    {"name": "x", "opcode": "parameter", "shape": [)" + n + R"(], "parameter_number": 0},
    {"name": "y", "opcode": "parameter", "shape": [)" + n + R"(], "parameter_number": 1},
    {"name": "s", "opcode": "add", "operands": ["x", "y"], "shape": [)" + n + R"(]},
    {"name": "m", "opcode": "multiply", "operands": ["s", "x"], "shape": [)" + n + R"(]},
    {"name": "t", "opcode": "subtract", "operands": ["m", "y"], "shape": [)" + n + R"(]},
    {"name": "r", "opcode": "maximum", "operands": ["t", "y"], "shape": [)" + n + R"(]}]})");
  const Kernel kernel("chain4", program);
  const SearchSpace space = fusion_space(program);
  FusionConfig all = FusionConfig::none(program);
  for (std::size_t e : fusible_edges(program)) all.fused[e] = true;
  const std::vector<Config> configs = {fusion_space_config(program, space, FusionConfig::none(program)), fusion_space_config(program, space, all)};
  CpuBackend backend(bench_options());
  const auto results = backend.measure(kernel, space, configs);
  std::printf("elementwise chain add -> multiply -> subtract -> maximum on %s f32 elements\n", n.c_str());
  const char* names[] = {"unfused (4 kernels, 3 intermediates in memory)", "fused (1 loop nest)"};
  for (int i = 0; i < 2; ++i) {
    if (results[i].ok())
      std::printf("  %-48s %8.2f ms  cv %.2f%%\n", names[i], results[i].seconds * 1e3, results[i].spread * 100);
    else
      std::printf("  %-48s %s %s\n", names[i], std::string(status_name(results[i].status)).c_str(), results[i].message.c_str());
  }
  if (results[0].ok() && results[1].ok()) std::printf("  fused speedup %.2fx\n", results[0].seconds / results[1].seconds);
}

void bench_noise() {
  // A mid-size kernel (~1 ms) measured in 10 separate runner processes.
  const Program program = parse(R"({"name": "mm256", "ops": [
    {"name": "a", "opcode": "parameter", "shape": [256, 256], "parameter_number": 0},
    {"name": "b", "opcode": "parameter", "shape": [256, 256], "parameter_number": 1},
    {"name": "c", "opcode": "dot", "operands": ["a", "b"], "shape": [256, 256], "dot": {"lhs_contracting": [1], "rhs_contracting": [0]}}]})");
  const Kernel kernel("mm256", program);
  const SearchSpace space = cpu_tile_space(kernel);
  const Config config = default_tile_config(kernel, space);
  CpuBackend backend;  // default repeat settings, as `perftune measure` uses them
  std::vector<double> medians, within;
  for (int run = 0; run < 10; ++run) {
    const auto r = backend.measure(kernel, space, std::vector<Config>{config});
    if (!r[0].ok()) continue;
    medians.push_back(r[0].seconds);
    within.push_back(r[0].spread);
  }
  if (medians.empty()) return;
  const double mean = std::accumulate(medians.begin(), medians.end(), 0.0) / static_cast<double>(medians.size());
  double var = 0;
  for (double m : medians) var += (m - mean) * (m - mean);
  var /= static_cast<double>(std::max<std::size_t>(medians.size() - 1, 1));
  std::sort(within.begin(), within.end());
  std::printf("noise: 256x256x256 matmul %s, %zu separate measurements\n", space.to_json(config).dump().c_str(), medians.size());
  std::printf("  mean median %.3f ms; CV across measurements %.2f%%; within-measurement CV median %.2f%% (max %.2f%%)\n", mean * 1e3,
              100 * std::sqrt(var) / mean, 100 * within[within.size() / 2], 100 * within.back());
}

}  // namespace

int main(int argc, char** argv) {
  std::string what = "all";
  std::size_t configs = 40;
  std::uint64_t seed = 1;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--configs") && i + 1 < argc) configs = std::strtoul(argv[++i], nullptr, 10);
    else if (!std::strcmp(argv[i], "--seed") && i + 1 < argc) seed = std::strtoull(argv[++i], nullptr, 10);
    else what = argv[i];
  }
  if (what == "matmul" || what == "all") bench_matmul(configs, seed);
  if (what == "chain" || what == "all") bench_chain();
  if (what == "noise" || what == "all") bench_noise();
  return 0;
}
