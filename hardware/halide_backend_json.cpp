#include "hardware/halide_backend_json.h"

#include <utility>

#include "hardware/process/subprocess.h"

namespace perftune {

const std::vector<std::string>& halide_backend_option_keys() {
  static const std::vector<std::string> keys = {"threads",     "run_timeout_seconds", "autoschedule_timeout_seconds",
                                                "min_repeats", "max_repeats",         "target_cv",
                                                "time_budget_seconds", "parallel_guard_attempts"};
  return keys;
}

void read_halide_backend_options(const JsonView& object, HalideBackendOptions& options) {
  if (const auto v = object.find("threads"))
    options.threads = static_cast<int>(v->as_count("a thread count (0 = the machine's cores)"));
  // A timeout bounds a worker that may hang forever: 0 must not quietly mean "no limit".
  for (auto [key, timeout] : {std::pair{"run_timeout_seconds", &options.run_timeout_seconds},
                              std::pair{"autoschedule_timeout_seconds", &options.autoschedule_timeout_seconds}})
    if (const auto v = object.find(key)) {
      *timeout = v->as_number();
      if (auto problem = timeout_problem(*timeout)) v->fail("a timeout in seconds, but " + *problem);
    }
  if (const auto v = object.find("min_repeats")) options.min_repeats = static_cast<int>(v->as_positive_int());
  if (const auto v = object.find("max_repeats")) options.max_repeats = static_cast<int>(v->as_positive_int());
  if (options.max_repeats < options.min_repeats) {
    const auto max = object.find("max_repeats");
    (max ? *max : object).fail("max_repeats at least min_repeats (" + std::to_string(options.min_repeats) + ")");
  }
  if (const auto v = object.find("target_cv")) options.target_cv = v->as_non_negative_number();
  // 0 would time every config by its warm-up run alone (runner/sample_timer.h).
  if (const auto v = object.find("time_budget_seconds")) {
    options.time_budget_seconds = v->as_non_negative_number();
    if (!(options.time_budget_seconds > 0)) v->fail("a positive number of seconds");
  }
  if (const auto v = object.find("parallel_guard_attempts"))
    options.parallel_guard_attempts = static_cast<int>(v->as_count("a number of attempts (0 = no guard)"));
}

}  // namespace perftune
