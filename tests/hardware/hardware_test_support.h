#pragma once
// Small programs and a shared Halide backend for the hardware tests (tiny shapes: compiles dominate).
#include <memory>
#include <string>

#include "hardware/halide/halide_backend.h"
#include "ir/json_view.h"
#include "ir/program_json.h"
#include "test_support.h"

namespace perftune {

inline Program program_from_text(const std::string& text) {
  const nlohmann::json json = parse_json_text(text, "test program");
  return program_from_json(JsonView(json, "test program"));
}

// A one-op kernel for the tests of backends that wrap or stand in for another (nothing compiles it).
inline const Kernel& tiny_add_kernel() {
  static const Kernel kernel("add", program_from_text(R"({"name": "add", "ops": [
    {"name": "a", "opcode": "parameter", "shape": [8], "parameter_number": 0},
    {"name": "y", "opcode": "add", "operands": ["a", "a"], "shape": [8]}]})"));
  return kernel;
}

// Fast settings: few repeats, short budgets.
inline HalideBackendOptions fast_halide_options() {
  HalideBackendOptions options;
  options.min_repeats = 3;
  options.max_repeats = 5;
  options.time_budget_seconds = 0.02;
  options.min_sample_seconds = 1e-4;
  options.run_timeout_seconds = 30;
  // No parallel guard: tests check what a timing is, not its figure, and under ctest -j2 the other
  // core is busy, which the guard would read as a disturbance to wait out (halide_backend_test
  // tests the guard).
  options.parallel_guard_attempts = 0;
  return options;
}

inline HalideBackend& shared_halide_backend() {
  static HalideBackend backend(fast_halide_options());
  return backend;
}

}  // namespace perftune
