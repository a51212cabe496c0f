#pragma once
// Small programs and a shared CPU backend for the hardware tests (tiny shapes: compiles dominate).
#include <memory>
#include <string>

#include "hardware/cpu_backend.h"
#include "ir/json_view.h"
#include "ir/program_json.h"
#include "test_support.h"

namespace perftune {

inline Program program_from_text(const std::string& text) {
  const nlohmann::json json = parse_json_text(text, "test program");
  return program_from_json(JsonView(json, "test program"));
}

// Fast settings: few repeats, short budgets; compiled kernels persist in the build tree so a
// second test run compiles nothing.
inline CpuBackendOptions fast_cpu_options() {
  CpuBackendOptions options;
  options.cache_dir = std::string(PERFTUNE_BINARY_DIR) + "/test_kernel_cache";
  options.min_repeats = 3;
  options.max_repeats = 5;
  options.time_budget_seconds = 0.05;
  options.min_sample_seconds = 1e-4;
  options.run_timeout_seconds = 5;
  return options;
}

inline CpuBackend& shared_cpu_backend() {
  static CpuBackend backend(fast_cpu_options());
  return backend;
}

}  // namespace perftune
