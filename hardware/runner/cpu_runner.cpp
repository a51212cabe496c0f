// perftune_cpu_runner: runs one generated CPU kernel in its own process, so that a crash or a
// hang in generated code cannot take the tuner down (the backend kills it on a timeout).
//
//   perftune_cpu_runner KERNEL.so OUTPUTS.bin SEED MIN_REPEATS MAX_REPEATS TARGET_CV BUDGET_S
//                       MIN_SAMPLE_S PARAMETERS OUTPUTS SIZE...
//
// Buffers (one SIZE each, in elements): PARAMETERS inputs filled by input_data.h, then OUTPUTS
// results, then intermediates. It runs the kernel once (warm-up), writes the outputs as raw f32 to
// OUTPUTS.bin for the backend to check, then times repeats: each sample runs the kernel enough
// times to last MIN_S (timer resolution), and sampling stops once the coefficient of variation
// is <= TARGET_CV after MIN_REPEATS samples, at MAX_REPEATS, or when BUDGET_S is spent (a slow
// kernel still gets three samples if they fit in three budgets).
// Prints "seconds T1 T2 ..." (per call) on stdout; exits non-zero with a reason on stderr.
#include <dlfcn.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "hardware/input_data.h"

namespace {

using Entry = void (*)(float* const*);
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

double coefficient_of_variation(const std::vector<double>& xs) {
  double mean = 0, var = 0;
  for (double x : xs) mean += x;
  mean /= static_cast<double>(xs.size());
  for (double x : xs) var += (x - mean) * (x - mean);
  var /= static_cast<double>(xs.size() > 1 ? xs.size() - 1 : 1);
  return mean > 0 ? std::sqrt(var) / mean : 0.0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 11) {
    std::fprintf(stderr, "usage: %s KERNEL.so OUTPUTS.bin SEED MIN_REPEATS MAX_REPEATS TARGET_CV BUDGET_S MIN_SAMPLE_S PARAMETERS OUTPUTS SIZE...\n", argv[0]);
    return 2;
  }
  const std::uint64_t seed = std::strtoull(argv[3], nullptr, 10);
  const int min_repeats = std::atoi(argv[4]), max_repeats = std::atoi(argv[5]);
  const double target_cv = std::atof(argv[6]), budget = std::atof(argv[7]), min_sample = std::atof(argv[8]);
  const std::size_t parameters = std::strtoull(argv[9], nullptr, 10), outputs = std::strtoull(argv[10], nullptr, 10);
  std::vector<std::size_t> sizes;
  for (int a = 11; a < argc; ++a) sizes.push_back(std::strtoull(argv[a], nullptr, 10));
  if (parameters + outputs > sizes.size()) {
    std::fprintf(stderr, "runner: %zu parameters and %zu outputs but only %zu buffer sizes\n", parameters, outputs, sizes.size());
    return 2;
  }

  void* library = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    std::fprintf(stderr, "runner: cannot load %s: %s\n", argv[1], dlerror());
    return 3;
  }
  const auto entry = reinterpret_cast<Entry>(dlsym(library, "perftune_entry"));
  if (!entry) {
    std::fprintf(stderr, "runner: %s has no perftune_entry\n", argv[1]);
    return 3;
  }

  // 64-byte alignment: a cache line and an AVX-512 vector.
  std::vector<float*> buffers;
  for (std::size_t b = 0; b < sizes.size(); ++b) {
    const std::size_t bytes = ((std::max<std::size_t>(sizes[b], 1) * sizeof(float) + 63) / 64) * 64;
    auto* data = static_cast<float*>(std::aligned_alloc(64, bytes));
    if (!data) {
      std::fprintf(stderr, "runner: out of memory for buffer %zu (%zu bytes)\n", b, bytes);
      return 4;
    }
    std::memset(data, 0, bytes);
    if (b < parameters)
      for (std::size_t i = 0; i < sizes[b]; ++i) data[i] = perftune::input_value(seed, b, i, sizes[b]);
    buffers.push_back(data);
  }

  entry(buffers.data());  // warm-up (page faults, caches) and the result that is checked
  if (FILE* out = std::fopen(argv[2], "wb")) {
    for (std::size_t b = parameters; b < parameters + outputs; ++b)
      if (std::fwrite(buffers[b], sizeof(float), sizes[b], out) != sizes[b]) {
        std::fprintf(stderr, "runner: cannot write %s\n", argv[2]);
        return 5;
      }
    std::fclose(out);
  } else {
    std::fprintf(stderr, "runner: cannot open %s\n", argv[2]);
    return 5;
  }

  const auto start = Clock::now();
  // Calls per sample: doubled until a sample lasts min_sample (as Python's timeit autorange).
  long calls = 1;
  for (;;) {
    const auto t = Clock::now();
    for (long c = 0; c < calls; ++c) entry(buffers.data());
    if (seconds_since(t) >= min_sample || calls >= (1L << 30)) break;
    calls *= 2;
  }
  std::vector<double> samples;
  while (static_cast<int>(samples.size()) < max_repeats) {
    const auto t = Clock::now();
    for (long c = 0; c < calls; ++c) entry(buffers.data());
    samples.push_back(seconds_since(t) / static_cast<double>(calls));
    const double spent = seconds_since(start);
    if (static_cast<int>(samples.size()) >= min_repeats && coefficient_of_variation(samples) <= target_cv) break;
    // A slow kernel stops at the budget, with three samples when they fit in three budgets.
    if (spent >= budget && (samples.size() >= 3 || spent >= 3 * budget)) break;
  }
  std::printf("seconds");
  for (double s : samples) std::printf(" %.9g", s);
  std::printf("\n");
  return 0;
}
