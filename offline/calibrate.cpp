#include "offline/calibrate.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <immintrin.h>

namespace perftune {

namespace {

using Clock = std::chrono::steady_clock;

double elapsed(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// Independent accumulators: enough to cover FMA latency x issue width (4 cycles x 2 pipes on
// current x86 cores, Agner Fog's instruction tables), so the loop is throughput-bound.
constexpr int kAccumulators = 12;
constexpr std::int64_t kChunk = 1 << 16;  // FMA iterations between clock reads

// Each returns a value derived from every accumulator so the compiler cannot drop the work.
__attribute__((target("avx512f"))) float fma_chunk_avx512(std::int64_t iterations) {
  __m512 acc[kAccumulators];
  for (int j = 0; j < kAccumulators; ++j) acc[j] = _mm512_set1_ps(1.0f + 0.01f * static_cast<float>(j));
  const __m512 a = _mm512_set1_ps(0.9999f), b = _mm512_set1_ps(1e-4f);
  for (std::int64_t i = 0; i < iterations; ++i)
    for (int j = 0; j < kAccumulators; ++j) acc[j] = _mm512_fmadd_ps(acc[j], a, b);
  __m512 sum = acc[0];
  for (int j = 1; j < kAccumulators; ++j) sum = _mm512_add_ps(sum, acc[j]);
  alignas(64) float lanes[16];
  _mm512_store_ps(lanes, sum);
  float total = 0.0f;
  for (float lane : lanes) total += lane;
  return total;
}

__attribute__((target("avx2,fma"))) float fma_chunk_avx2(std::int64_t iterations) {
  __m256 acc[kAccumulators];
  for (int j = 0; j < kAccumulators; ++j) acc[j] = _mm256_set1_ps(1.0f + 0.01f * static_cast<float>(j));
  const __m256 a = _mm256_set1_ps(0.9999f), b = _mm256_set1_ps(1e-4f);
  for (std::int64_t i = 0; i < iterations; ++i)
    for (int j = 0; j < kAccumulators; ++j) acc[j] = _mm256_fmadd_ps(acc[j], a, b);
  __m256 sum = acc[0];
  for (int j = 1; j < kAccumulators; ++j) sum = _mm256_add_ps(sum, acc[j]);
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, sum);
  float total = 0.0f;
  for (float lane : lanes) total += lane;
  return total;
}

float fma_chunk_sse(std::int64_t iterations) {
  __m128 acc[kAccumulators];
  for (int j = 0; j < kAccumulators; ++j) acc[j] = _mm_set1_ps(1.0f + 0.01f * static_cast<float>(j));
  const __m128 a = _mm_set1_ps(0.9999f), b = _mm_set1_ps(1e-4f);
  for (std::int64_t i = 0; i < iterations; ++i)
    for (int j = 0; j < kAccumulators; ++j) acc[j] = _mm_add_ps(_mm_mul_ps(acc[j], a), b);
  __m128 sum = acc[0];
  for (int j = 1; j < kAccumulators; ++j) sum = _mm_add_ps(sum, acc[j]);
  alignas(16) float lanes[4];
  _mm_store_ps(lanes, sum);
  return lanes[0] + lanes[1] + lanes[2] + lanes[3];
}

float run_fma_chunk(int vector_bytes, std::int64_t iterations) {
  if (vector_bytes == 64) return fma_chunk_avx512(iterations);
  if (vector_bytes == 32) return fma_chunk_avx2(iterations);
  return fma_chunk_sse(iterations);
}

void noop_kernel() { asm volatile(""); }

}  // namespace

int fma_vector_bytes() {
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) return 64;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return 32;
  return 16;
}

double measure_fma_flops(unsigned threads, double seconds) {
  threads = std::max(1u, threads);
  const int vector_bytes = fma_vector_bytes();
  const double flops_per_chunk = static_cast<double>(kChunk) * kAccumulators * (vector_bytes / 4) * 2.0;
  // Each thread keeps its best chunk: on a shared machine the best is what the core can do when
  // nothing else runs on it (STREAM reports its best pass for the same reason).
  std::vector<double> best(threads, 0.0);
  std::vector<float> sinks(threads, 0.0f);
  std::vector<std::thread> workers;
  const Clock::time_point start = Clock::now();
  for (unsigned t = 0; t < threads; ++t)
    workers.emplace_back([&, t] {
      int chunks = 0;
      while (chunks < 2 || elapsed(start) < seconds) {
        const Clock::time_point chunk = Clock::now();
        sinks[t] += run_fma_chunk(vector_bytes, kChunk);
        best[t] = std::max(best[t], flops_per_chunk / elapsed(chunk));
        ++chunks;
      }
    });
  for (std::thread& worker : workers) worker.join();
  volatile float sink = 0.0f;
  for (float s : sinks) sink = sink + s;
  double total = 0.0;
  for (double rate : best) total += rate;
  return total;
}

double measure_triad_bandwidth(unsigned threads, std::size_t bytes_per_array, double seconds) {
  threads = std::max(1u, threads);
  const std::size_t n = std::max<std::size_t>(bytes_per_array / sizeof(double), threads * 64);
  std::unique_ptr<double[]> a(new double[n]), b(new double[n]), c(new double[n]);
  const double scalar = 3.0;
  auto run = [&](auto body) {
    std::vector<std::thread> workers;
    for (unsigned t = 0; t < threads; ++t)
      workers.emplace_back([&, t] { body(n * t / threads, n * (t + 1) / threads); });
    for (std::thread& worker : workers) worker.join();
  };
  // First touch by the same threads that stream later (pages land near them).
  run([&](std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i) {
      a[i] = 0.0;
      b[i] = 1.0;
      c[i] = 2.0;
    }
  });
  double best = 0.0;
  const Clock::time_point start = Clock::now();
  int passes = 0;
  while (passes < 2 || elapsed(start) < seconds) {
    const Clock::time_point pass = Clock::now();
    run([&](std::size_t begin, std::size_t end) {
      for (std::size_t i = begin; i < end; ++i) a[i] = b[i] + scalar * c[i];
    });
    const double time = elapsed(pass);
    best = std::max(best, 3.0 * sizeof(double) * static_cast<double>(n) / time);
    ++passes;
  }
  volatile double sink = a[n / 2];
  (void)sink;
  return best;
}

double measure_call_seconds(double seconds) {
  void (*volatile kernel)() = &noop_kernel;
  constexpr int kCalls = 1 << 14;
  double best = 1.0;
  const Clock::time_point start = Clock::now();
  while (elapsed(start) < seconds) {
    const Clock::time_point batch = Clock::now();
    for (int i = 0; i < kCalls; ++i) kernel();
    best = std::min(best, elapsed(batch) / kCalls);
  }
  return best;
}

std::size_t dram_triad_bytes(const CacheSizes& caches) {
  return std::max<std::size_t>(64u << 20, 4 * static_cast<std::size_t>(std::max<std::int64_t>(0, caches.l3)));
}

CalibrationResult calibrate_host(const CalibrationOptions& options) {
  CalibrationResult result;
  result.cpu_name = read_cpu_name();
  result.cores = options.threads > 0 ? options.threads : std::max(1u, std::thread::hardware_concurrency());
  result.vector_bytes = fma_vector_bytes();
  result.caches = read_cache_sizes();
  const double seconds = options.seconds_per_benchmark;
  result.flops_one_core = measure_fma_flops(1, seconds);
  result.flops_all_cores = measure_fma_flops(result.cores, seconds);
  std::size_t bytes = options.triad_bytes;
  if (bytes == 0) bytes = dram_triad_bytes(result.caches);
  result.bandwidth_one_core = measure_triad_bandwidth(1, bytes, seconds);
  result.bandwidth_all_cores = measure_triad_bandwidth(result.cores, bytes, seconds);
  result.call_seconds = measure_call_seconds(std::min(seconds, 0.1));
  return result;
}

nlohmann::ordered_json calibration_to_json(const CalibrationResult& result) {
  nlohmann::ordered_json json;
  json["cpu"] = result.cpu_name;
  json["cores"] = result.cores;
  json["vector_bytes"] = result.vector_bytes;
  json["f32_flops_one_core"] = result.flops_one_core;
  json["f32_flops_all_cores"] = result.flops_all_cores;
  json["triad_bandwidth_one_core"] = result.bandwidth_one_core;
  json["triad_bandwidth_all_cores"] = result.bandwidth_all_cores;
  json["call_seconds"] = result.call_seconds;
  json["l1d_bytes"] = result.caches.l1d;
  json["l2_bytes"] = result.caches.l2;
  json["l3_bytes"] = result.caches.l3;
  return json;
}

DeviceSpec host_device_spec(const CalibrationResult& result) {
  DeviceSpec spec;
  spec.name = "host";
  spec.kind = "cpu";
  spec.tile_knob_units = TileKnobUnits::kElements;
  spec.cores = static_cast<int>(result.cores);
  const std::int64_t lanes = std::max(1, result.vector_bytes / 4);
  spec.matrix_flops[ElementType::kF32] = result.flops_one_core;
  spec.matrix_flops[ElementType::kF64] = result.flops_one_core / 2.0;
  // Elementwise ops issue one operation per lane at the FMA instruction rate (an FMA counts 2).
  spec.vector_flops[ElementType::kF32] = result.flops_one_core / 2.0;
  spec.vector_flops[ElementType::kF64] = result.flops_one_core / 4.0;
  spec.memory_bandwidth = result.bandwidth_one_core;
  spec.onchip_bytes = result.caches.l2 > 0 ? result.caches.l2 : (1 << 20);
  spec.onchip_is_scratchpad = false;
  spec.matrix_unit = {1, lanes};
  spec.vector_tile = {1, lanes};
  spec.launch_overhead = result.call_seconds;
  spec.tile_overhead = result.call_seconds;
  const std::string by = "measured by `perftune calibrate` on " + result.cpu_name;
  spec.sources = {
      {"matrix_flops", by + ": a " + std::to_string(result.vector_bytes * 8) +
                           "-bit FMA micro-kernel with 12 independent accumulators on one core (f64: half the lanes)"},
      {"vector_flops", "half the FMA FLOP/s: one elementwise operation per lane per instruction at the FMA issue rate"},
      {"memory_bandwidth", by + ": best STREAM-like triad pass on one core, arrays 4x the L3 (24 bytes per element)"},
      {"onchip_bytes", "L2 per core from /sys/devices/system/cpu/cpu0/cache (sysconf fallback)"},
      {"matrix_unit", "no matrix unit: a multiply-add pass covers one vector of output lanes"},
      {"vector_tile", "one vector register of f32 lanes (" + std::to_string(result.vector_bytes) + " bytes)"},
      {"launch_overhead", by + ": one indirect call of an empty kernel"},
      {"tile_overhead", "same as launch_overhead: a tile iteration costs about one call's bookkeeping"}};
  spec.measured = calibration_to_json(result);
  return spec;
}

}  // namespace perftune
