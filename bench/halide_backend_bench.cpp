// Benchmark of the live CPU backend (not a test), on this machine:
//   matmul      tunes the 1024^3 f32 matmul (configs/campaigns/cpu_matmul_1024.json, 200
//               measurements), then times its best schedule, Halide's three autoschedulers and
//               OpenBLAS sgemm (the backend's library reference, torch::mm in its own process) at
//               the same thread count side by side, alternating, and
//               prints each one's GFLOP/s and ratio to OpenBLAS (floor: tuned >= 0.8x).
//   noise       one schedule of a 256^3 matmul (or --program FILE unfused) measured in N (--count,
//               10) separate measurements in one worker, then in N fresh workers: the spread
//               (coefficient of variation) of their medians (floor, one worker: <= 3%), and what
//               the parallel guard did (--guard ATTEMPTS, 0 = off; default the backend's).
//   throughput  a 60-measurement campaign on a kernel that runs in well under 10 ms: configs
//               measured per second and the share of wall time outside the backend (floors: >= 5/s
//               and <= 5%).
//   build/bench/halide_backend_bench matmul [--rounds N] | noise [--program FILE] [--threads N] [--count N] [--guard N] | throughput
// Run from the project's root (it reads configs/).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "autotuner/campaign/campaign.h"
#include "autotuner/campaign/campaign_runner.h"
#include "autotuner/campaign/program_target.h"
#include "hardware/halide/fusion_space.h"
#include "hardware/halide/halide_backend.h"
#include "hardware/halide/halide_schedule.h"
#include "ir/program_json.h"

using namespace perftune;

namespace {

using Clock = std::chrono::steady_clock;

double median(std::vector<double> xs) {
  std::sort(xs.begin(), xs.end());
  return xs.empty() ? NAN : xs[xs.size() / 2];
}

double cv(const std::vector<double>& xs) {
  double mean = 0, var = 0;
  for (double x : xs) mean += x;
  mean /= static_cast<double>(xs.size());
  for (double x : xs) var += (x - mean) * (x - mean);
  return std::sqrt(var / static_cast<double>(xs.size() - 1)) / mean;
}

int matmul(int rounds) {
  const Campaign campaign = load_campaign("configs/campaigns/cpu_matmul_1024.json");
  const std::string output = "/tmp/perftune-bench-matmul";
  std::filesystem::remove_all(output);
  std::cerr << "tuning " << campaign.name << " (" << campaign.tuner.max_measurements << " measurements) ...\n";
  CampaignRunOptions options;
  options.output = output;
  options.progress = &std::cerr;
  options.measure_peers = false;
  const auto summary = run_campaign(campaign, options);
  const ProgramTarget target = program_target(campaign);
  const Config best = target.space->from_json(summary.tuning->best_config);
  std::printf("tuned: %s after %zu measurements (%.0f s wall)\n", summary.tuning->best_config.dump().c_str(), summary.measurements,
              summary.wall_seconds);

  HalideBackendOptions backend_options;
  HalideBackend backend(backend_options);
  const int threads = backend.options().threads;
  const double flops = 2.0 * 1024 * 1024 * 1024;
  std::vector<double> tuned, blas;
  std::vector<std::vector<double>> peers(3);
  std::vector<std::string> peer_names, peer_settings;
  for (int r = 0; r < rounds; ++r) {
    tuned.push_back(backend.measure(target.kernel, *target.space, std::vector<Config>{best})[0].seconds);
    const auto library = backend.measure_library(target.kernel);
    blas.push_back(library && library->result.ok() ? library->result.seconds : NAN);
    if (r == 0) {
      auto measured = backend.measure_peers(target.kernel);
      measured.pop_back();  // the library reference, timed in every round above
      for (std::size_t p = 0; p < measured.size(); ++p) {
        peer_names.push_back(measured[p].name);
        peer_settings.push_back(measured[p].settings);
        peers[p].push_back(measured[p].result.ok() ? measured[p].result.seconds : NAN);
      }
    }
  }
  const double blas_s = median(blas);
  std::printf("1024^3 f32 matmul, %d threads, %d rounds alternating (%s)\n", threads, rounds, backend.fingerprint().c_str());
  std::printf("%-28s %10s %10s %10s\n", "what", "ms", "GFLOP/s", "x OpenBLAS");
  const auto row = [&](const std::string& name, double s) {
    std::printf("%-28s %10.2f %10.1f %10.3f\n", name.c_str(), s * 1e3, flops / s / 1e9, blas_s / s);
  };
  row("perftune tuned", median(tuned));
  row("OpenBLAS sgemm (torch::mm)", blas_s);
  for (std::size_t p = 0; p < peer_names.size(); ++p) row(peer_names[p], median(peers[p]));
  for (std::size_t p = 0; p < peer_names.size(); ++p) std::printf("  %s: %s\n", peer_names[p].c_str(), peer_settings[p].c_str());
  return 0;
}

// One config measured `count` times in one backend (its worker kept, the pipeline compiled once),
// then in `count` fresh backends (a new worker each): the spread within a process against across processes.
// Default: the 256^3 matmul's heuristic schedule; --program FILE: that program unfused, as one
// whole-program measurement (the fusion task's records are of this kind).
int noise(const std::string& program_file, int threads, int count, int guard_attempts) {
  const Program program = program_file.empty() ? program_from_json(JsonView(nlohmann::json::parse(R"({"name": "mm256", "ops": [
    {"name": "a", "opcode": "parameter", "shape": [256, 256], "parameter_number": 0},
    {"name": "b", "opcode": "parameter", "shape": [256, 256], "parameter_number": 1},
    {"name": "y", "opcode": "dot", "shape": [256, 256], "operands": ["a", "b"], "dot": {"lhs_contracting": [1], "rhs_contracting": [0]}}]})"), "bench"))
                                               : load_program_file(program_file);
  const Kernel kernel(program.name(), program);
  const SearchSpace space = program_file.empty() ? halide_schedule_space(kernel) : fusion_space(program, FusionChoices::kPlacements);
  const Config config = program_file.empty() ? heuristic_config(space, kernel) : fusion_space_config(program, space, FusionConfig::none(program));
  const auto seconds = [&](HalideBackend& backend) {
    const MeasureResult result = backend.measure(kernel, space, std::vector<Config>{config})[0];
    if (!result.ok()) throw std::runtime_error(kernel.name() + ": " + result.message);
    return result.seconds;
  };
  std::vector<double> same, fresh;
  HalideBackendOptions options;
  options.threads = threads;
  if (guard_attempts >= 0) options.parallel_guard_attempts = guard_attempts;
  ParallelGuardCounts guard;
  HalideBackend kept(options);
  for (int m = 0; m < count; ++m) same.push_back(seconds(kept));
  guard += kept.parallel_guard_counts();
  for (int m = 0; m < count; ++m) {
    HalideBackend backend(options);
    fresh.push_back(seconds(backend));
    guard += backend.parallel_guard_counts();
  }
  std::printf("parallel guard (%d attempts): %zu timings watched, %zu retried in their worker, %zu retaken in fresh workers, %zu disturbed in all\n",
              options.parallel_guard_attempts, guard.timed, guard.retried, guard.retaken, guard.disturbed);
  std::printf("%s, %s, %d measurements: one worker: median %.1f us, spread (CV) %.2f%%; a fresh worker each: median %.1f us, CV %.2f%%\n",
              kernel.name().c_str(), program_file.empty() ? "heuristic schedule" : "unfused", count, median(same) * 1e6, 100 * cv(same),
              median(fresh) * 1e6, 100 * cv(fresh));
  for (const auto& [name, values] : {std::pair{"one worker", same}, std::pair{"fresh workers", fresh}}) {
    std::printf("  %s (us):", name);
    for (double s : values) std::printf(" %.1f", s * 1e6);
    std::printf("\n");
  }
  return 0;
}

int throughput() {
  const Campaign campaign = load_campaign("configs/campaigns/cpu_mlp_demo.json");
  CampaignRunOptions options;
  options.output = "/tmp/perftune-bench-throughput";
  std::filesystem::remove_all(options.output);
  options.measure_peers = false;
  Campaign sixty = campaign;
  sixty.tuner.max_measurements = 60;
  const auto summary = run_campaign(sixty, options);
  const double wall = summary.wall_seconds;
  const std::size_t measured = summary.measurements;
  std::printf("%s: %zu configs in %.1f s wall: %.2f configs/s; outside the backend %.1f%% of wall time\n", campaign.name.c_str(),
              measured, wall, static_cast<double>(measured) / wall, 100 * summary.tuning->search_share);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  int rounds = 5;
  std::string program;
  int threads = 0, count = 10, guard = -1;
  for (int a = 2; a + 1 < argc; ++a) {
    if (std::strcmp(argv[a], "--rounds") == 0) rounds = std::atoi(argv[a + 1]);
    if (std::strcmp(argv[a], "--program") == 0) program = argv[a + 1];
    if (std::strcmp(argv[a], "--threads") == 0) threads = std::atoi(argv[a + 1]);
    if (std::strcmp(argv[a], "--count") == 0) count = std::max(1, std::atoi(argv[a + 1]));
    if (std::strcmp(argv[a], "--guard") == 0) guard = std::atoi(argv[a + 1]);
  }
  try {
    if (mode == "matmul") return matmul(rounds);
    if (mode == "noise") return noise(program, threads, count, guard);
    if (mode == "throughput") return throughput();
  } catch (const std::exception& error) {
    std::fprintf(stderr, "halide_backend_bench: %s\n", error.what());
    return 1;
  }
  std::fprintf(stderr, "usage: %s matmul [--rounds N] | noise [--program FILE] [--threads N] [--count N] [--guard N] | throughput\n", argv[0]);
  return 2;
}
