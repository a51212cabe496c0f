#pragma once
// Measures what the analytical model needs to know about this CPU (`perftune calibrate`):
// achievable FLOP/s of a vectorised FMA micro-kernel on one core and on all cores, memory
// bandwidth with a STREAM-triad-like kernel on buffers far larger than the caches, the cost of a
// kernel call, and the cache sizes the OS reports. Turns them into configs/hardware/host.json.
#include <cstddef>
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "hardware/host_facts.h"
#include "ir/device_spec.h"

namespace perftune {

struct CalibrationOptions {
  double seconds_per_benchmark = 0.4;  // each micro-benchmark runs about this long
  // Bytes per triad array (three arrays); 0 = 4x the last-level cache and at least 64 MiB, so
  // that the triad streams from DRAM (STREAM's rule: each array >= 4x the sum of the caches).
  std::size_t triad_bytes = 0;
  unsigned threads = 0;  // 0 = every hardware thread
};

struct CalibrationResult {
  std::string cpu_name;
  unsigned cores = 1;
  int vector_bytes = 16;              // width of the FMA kernel's vectors (64 AVX-512, 32 AVX2, 16)
  double flops_one_core = 0.0;        // f32 FLOP/s, an FMA counted as 2
  double flops_all_cores = 0.0;
  double bandwidth_one_core = 0.0;    // bytes/s, triad (3 x 8 bytes per element, as STREAM counts)
  double bandwidth_all_cores = 0.0;
  double call_seconds = 0.0;          // one indirect call of an empty kernel
  CacheSizes caches;
};

// Widest vector (bytes) the FMA kernel can use on this CPU: 64, 32 or 16.
int fma_vector_bytes();

// f32 FLOP/s of `threads` threads each running the FMA kernel for about `seconds`.
double measure_fma_flops(unsigned threads, double seconds);
// Triad a[i] = b[i] + s * c[i] over three arrays of `bytes_per_array` bytes, split over
// `threads` threads; the best pass of those run within about `seconds`, in bytes/s.
double measure_triad_bandwidth(unsigned threads, std::size_t bytes_per_array, double seconds);
// Bytes per triad array that stream from DRAM: 4x the last-level cache, at least 64 MiB (STREAM's
// rule: each array >= 4x the sum of the caches).
std::size_t dram_triad_bytes(const CacheSizes& caches);
// Seconds per indirect call of an empty function (a kernel launch on the CPU backend).
double measure_call_seconds(double seconds);

CalibrationResult calibrate_host(const CalibrationOptions& options);
nlohmann::ordered_json calibration_to_json(const CalibrationResult& result);
// The spec the analytical model uses for this CPU (rates of one core; tiles in elements).
DeviceSpec host_device_spec(const CalibrationResult& result);

}  // namespace perftune
