#pragma once
// Real execution on this machine. For each config: generate C++ (cpu_codegen.h), compile it
// with the system compiler into a shared object cached on disk by a hash of (source, which
// names the kernel key and config; compiler; flags), compile a batch's configs in parallel,
// then run each in a child process (perftune_cpu_runner) with a timeout, check its outputs
// against the reference interpreter, and report the median and spread of timed repeats.
// Runs are serial: two measurements sharing the 2 cores would disturb each other's timing.
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "hardware/backend.h"

namespace perftune {

struct CpuBackendOptions {
  // Where compiled kernels are kept: empty = $PERFTUNE_CACHE, else $XDG_CACHE_HOME/perftune,
  // else ~/.cache/perftune (then /tmp/perftune-cache).
  std::string cache_dir;
  std::string compiler;  // empty = the compiler that built perftune (PERFTUNE_CXX_COMPILER)
  std::vector<std::string> flags = {"-O3", "-march=native", "-fPIC", "-shared", "-std=c++17"};
  int compile_jobs = 0;                  // parallel compiles; 0 = std::thread::hardware_concurrency()
  double compile_timeout_seconds = 120;  // a compiler stuck on one source is a compile_error
  double run_timeout_seconds = 10;       // a kernel (warm-up + repeats) over this is a timeout
  // Repeats: each sample lasts >= min_sample_seconds (1 ms: ~1000x the steady_clock resolution);
  // stop at CV <= target_cv after min_repeats, at max_repeats, or after time_budget_seconds.
  int min_repeats = 5;
  int max_repeats = 30;
  double target_cv = 0.02;  // 2%: below the typical gap between neighbouring tile configs
  double time_budget_seconds = 1.0;
  double min_sample_seconds = 1e-3;
  std::uint64_t seed = 1;  // input data (input_data.h)
  std::string runner;      // empty = the perftune_cpu_runner built with perftune
  // Test-only hook: rewrites each generated source before it is compiled, so tests can provoke
  // a compile error, a crash, a hang or a wrong result in real generated code.
  std::function<std::string(const std::string& source)> transform_source;
};

class CpuBackend : public Backend {
 public:
  // Throws std::runtime_error if the compiler cannot be run or the cache folder not created.
  explicit CpuBackend(CpuBackendOptions options = {});

  std::vector<MeasureResult> measure(const Kernel& kernel, const SearchSpace& space,
                                     std::span<const Config> configs) override;
  // "cpu:<model name from /proc/cpuinfo>:<compiler version>".
  std::string fingerprint() const override { return fingerprint_; }

  const CpuBackendOptions& options() const { return options_; }
  // Compiles run so far (cache misses) and cache hits, for tests and reports.
  std::size_t compiles() const { return compiles_; }
  std::size_t cache_hits() const { return cache_hits_; }

 private:
  struct Compiled {
    std::string library;  // path of the shared object; empty on failure
    std::string error;
    double seconds = 0.0;
  };
  Compiled compile(const std::string& source);
  const std::vector<std::vector<float>>& reference(const Kernel& kernel, const std::vector<OpId>& outputs);

  CpuBackendOptions options_;
  std::string fingerprint_;
  std::string compiler_identity_;
  std::mutex mutex_;
  std::size_t compiles_ = 0, cache_hits_ = 0;
  // Reference outputs by kernel key: every config of a kernel is checked against the same values.
  std::map<std::string, std::vector<std::vector<float>>> references_;
};

// The CPU's model name ("AMD EPYC 7B13"), from /proc/cpuinfo; "unknown" if absent.
std::string cpu_model_name();

}  // namespace perftune
