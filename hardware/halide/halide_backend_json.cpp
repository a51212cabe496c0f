#include "hardware/halide/halide_backend_json.h"

#include "hardware/process/subprocess.h"

namespace perftune {

namespace {

// A timeout bounds a worker that may hang forever: 0 must not quietly mean "no limit".
void read_timeout(const JsonView& value, double& seconds) {
  seconds = value.as_number();
  if (auto problem = timeout_problem(seconds)) value.fail("a timeout in seconds, but " + *problem);
}

}  // namespace

const SettingsTable<HalideBackendOptions>& halide_backend_settings() {
  using O = HalideBackendOptions;
  const O defaults;
  static const auto table =
      SettingsTable<O>()
          .custom("threads", "integer >= 0", std::to_string(defaults.threads), "Halide's thread pool; 0: the machine's cores",
                  [](const JsonView& v, O& o) { o.threads = static_cast<int>(v.as_count("a thread count (0 = the machine's cores)")); })
          .custom("run_timeout_seconds", "> 0", setting_number_text(defaults.run_timeout_seconds),
                  "compile, warm-up and timing of one config; past it the config is a timeout",
                  [](const JsonView& v, O& o) { read_timeout(v, o.run_timeout_seconds); })
          .custom("autoschedule_timeout_seconds", "> 0", setting_number_text(defaults.autoschedule_timeout_seconds),
                  "the same for a kernel an autoscheduler schedules, its search included",
                  [](const JsonView& v, O& o) { read_timeout(v, o.autoschedule_timeout_seconds); })
          .count("min_repeats", &O::min_repeats, "timed samples at the least")
          .count("max_repeats", &O::max_repeats, "timed samples at the most (>= min_repeats)")
          .non_negative("target_cv", &O::target_cv, "stop once the samples' robust coefficient of variation is this low")
          .custom("time_budget_seconds", "> 0", setting_number_text(defaults.time_budget_seconds),
                  "stop sampling a config after this long (0 would time it by its warm-up alone)",
                  [](const JsonView& v, O& o) {
                    o.time_budget_seconds = v.as_non_negative_number();
                    if (!(o.time_budget_seconds > 0)) v.fail("a positive number of seconds");
                  })
          .custom("parallel_guard_attempts", "integer >= 0", std::to_string(defaults.parallel_guard_attempts),
                  "attempts at a timing the machine did not disturb (0: no guard)",
                  [](const JsonView& v, O& o) {
                    o.parallel_guard_attempts = static_cast<int>(v.as_count("a number of attempts (0 = no guard)"));
                  })
          .check([](const JsonView& object, const O& o) {
            if (o.max_repeats >= o.min_repeats) return;
            const auto max = object.find("max_repeats");
            (max ? *max : object).fail("max_repeats at least min_repeats (" + std::to_string(o.min_repeats) + ")");
          });
  return table;
}

const std::vector<std::string>& halide_backend_option_keys() {
  static const std::vector<std::string> keys = halide_backend_settings().keys();
  return keys;
}

void read_halide_backend_options(const JsonView& object, HalideBackendOptions& options) {
  halide_backend_settings().read_members(object, options);
}

}  // namespace perftune
