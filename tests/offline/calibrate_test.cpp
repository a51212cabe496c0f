#include "offline/calibrate.h"

#include "test_support.h"

namespace perftune {
namespace {

// Bounds of plausibility for any CPU this runs on: above what a single scalar core from 2000
// manages (1e8), below the largest single-socket figures (1e13 FLOP/s, 1e12 B/s in cache).
constexpr double kMinRate = 1e8;
constexpr double kMaxFlops = 1e13;
constexpr double kMaxBandwidth = 1e12;

TEST_CASE("the FMA micro-kernel measures a plausible FLOP rate") {
  const double one = measure_fma_flops(1, 0.02);
  CHECK(one > kMinRate);
  CHECK(one < kMaxFlops);
  CHECK((fma_vector_bytes() == 16 || fma_vector_bytes() == 32 || fma_vector_bytes() == 64));
}

TEST_CASE("the triad measures a plausible bandwidth on small arrays") {
  const double bandwidth = measure_triad_bandwidth(1, 4 << 20, 0.02);
  CHECK(bandwidth > kMinRate);
  CHECK(bandwidth < kMaxBandwidth);
}

TEST_CASE("cache sizes are read and ordered") {
  const CacheSizes caches = read_cache_sizes();
  CHECK(caches.l1d >= 0);
  if (caches.l1d > 0 && caches.l2 > 0) CHECK(caches.l2 >= caches.l1d);
  if (caches.l2 > 0 && caches.l3 > 0) CHECK(caches.l3 >= caches.l2);
}

TEST_CASE("a tiny calibration yields a valid host spec that round-trips") {
  CalibrationOptions options;
  options.seconds_per_benchmark = 0.02;
  options.triad_bytes = 4 << 20;
  const CalibrationResult result = calibrate_host(options);
  CHECK(result.flops_one_core > kMinRate);
  CHECK(result.flops_all_cores > kMinRate);
  CHECK(result.bandwidth_one_core > kMinRate);
  CHECK(result.call_seconds > 0.0);
  CHECK(result.call_seconds < 1e-5);
  CHECK(result.cores >= 1);

  const DeviceSpec spec = host_device_spec(result);
  CHECK(spec.kind == "cpu");
  CHECK(spec.tile_knob_units == TileKnobUnits::kElements);
  CHECK_FALSE(spec.onchip_is_scratchpad);
  CHECK(spec.vector_tile[1] == result.vector_bytes / 4);
  const std::string path = scratch_dir("calibrate") + "/host.json";
  save_device_spec(spec, path);
  const DeviceSpec reread = load_device_spec(path);
  CHECK(reread.memory_bandwidth == spec.memory_bandwidth);
  CHECK(reread.matrix_rate(ElementType::kF32) == spec.matrix_rate(ElementType::kF32));
  CHECK(reread.measured.at("cpu") == result.cpu_name);
}

}  // namespace
}  // namespace perftune
