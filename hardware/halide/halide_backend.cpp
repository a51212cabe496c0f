#include "hardware/halide/halide_backend.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <thread>

#include "hardware/halide/halide_schedule.h"
#include "hardware/host_facts.h"

namespace perftune {

namespace {

std::string scratch_folder(const std::string& configured) {
  if (!configured.empty()) return configured;
  if (const char* tmp = std::getenv("TMPDIR"); tmp && *tmp) return tmp;
  return "/tmp";
}

// The last-level cache (sysfs, as perftune calibrate reads it); 32 MiB if unknown.
std::uint64_t last_level_cache_bytes() {
  const CacheSizes caches = read_cache_sizes();
  const std::int64_t largest = std::max({caches.l1d, caches.l2, caches.l3});
  return largest > 0 ? static_cast<std::uint64_t>(largest) : std::uint64_t{32} << 20;
}

std::uint64_t half_of_physical_memory() {
  return static_cast<std::uint64_t>(::sysconf(_SC_PHYS_PAGES)) * static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE)) / 2;
}

int default_threads() { return static_cast<int>(std::max(1u, std::thread::hardware_concurrency())); }

// The options with every default resolved. The library's runner is checked when the reference is
// measured, not here: a backend without it still tunes.
HalideBackendOptions resolved(HalideBackendOptions options) {
  if (options.blas_runner.empty()) options.blas_runner = {PERFTUNE_BLAS_RUNNER};
  if (options.threads <= 0) options.threads = default_threads();
  if (options.runner.empty()) options.runner = {PERFTUNE_HALIDE_RUNNER};
  if (!std::filesystem::exists(options.runner.front()))
    throw std::runtime_error("the Halide runner " + options.runner.front() + " does not exist (build the perftune_halide_runner target)");
  if (options.memory_limit_bytes == 0) options.memory_limit_bytes = half_of_physical_memory();
  if (options.compile_workers <= 0) options.compile_workers = std::min(2, default_threads());
  return options;
}

std::vector<std::string> worker_command(const HalideBackendOptions& options) {
  std::vector<std::string> argv = options.runner;
  argv.push_back(std::to_string(options.threads));
  argv.push_back(std::to_string(options.memory_limit_bytes));
  return argv;
}

std::string outputs_file(const HalideBackendOptions& options, const void* backend) {
  return scratch_folder(options.scratch_dir) + "/perftune-halide." + std::to_string(::getpid()) + "." +
         std::to_string(reinterpret_cast<std::uintptr_t>(backend)) + ".out";
}

}  // namespace

std::string host_machine_params(int threads) {
  return std::to_string(threads > 0 ? threads : default_threads()) + "," + std::to_string(last_level_cache_bytes()) + ",40";
}

HalideBackend::HalideBackend(HalideBackendOptions options)
    : options_(resolved(std::move(options))),
      fingerprint_("cpu:" + read_cpu_name() + ":halide14:" + std::to_string(options_.threads) + "t"),
      pool_(worker_command(options_), options_.compile_workers),
      runner_(options_, pool_, outputs_file(options_, this)),
      peers_(options_, pool_, runner_) {}

std::vector<MeasureResult> HalideBackend::measure(const Kernel& kernel, const SearchSpace& space, std::span<const Config> configs) {
  std::vector<MeasureResult> results(configs.size());
  std::vector<std::size_t> todo;
  std::vector<nlohmann::json> schedules(configs.size());
  for (std::size_t i = 0; i < configs.size(); ++i) {
    if (!space.contains(configs[i])) {
      results[i] = MeasureResult::failure(MeasureStatus::kInvalidConfig, "config " + configs[i].to_string() + " is not in the search space");
      continue;
    }
    schedules[i] = nlohmann::json::object();
    for (const auto& [name, value] : named_knobs(space, configs[i])) schedules[i][name] = value;
    todo.push_back(i);
  }
  if (pool_.size() < 2 || todo.size() < 2) {
    for (std::size_t i : todo) results[i] = runner_.compile_and_run(kernel, schedules[i], false);
    return results;
  }
  // Compile the batch on every worker at once, each pipeline kept in the worker that compiled it ...
  std::vector<nlohmann::json> requests;
  for (std::size_t i : todo) {
    requests.push_back(runner_.compile_request(kernel, schedules[i], false));
    requests.back()["keep"] = i;
  }
  const std::vector<KeptPipeline> kept = pool_.compile(requests, options_);
  // ... then run and time them one at a time.
  for (std::size_t t = 0; t < todo.size(); ++t) {
    const std::size_t i = todo[t];
    results[i] = kept[t].failure ? *kept[t].failure : runner_.run_kept(kernel, schedules[i], i, kept[t]);
  }
  return results;
}

}  // namespace perftune
