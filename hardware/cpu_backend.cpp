#include "hardware/cpu_backend.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <set>
#include <sstream>
#include <thread>

#include "hardware/cpu_codegen.h"
#include "hardware/op_semantics.h"
#include "hardware/reference_interpreter.h"
#include "hardware/subprocess.h"
#include "ir/file_io.h"
#include "ir/fusion.h"
#include "ir/stable_hash.h"

namespace perftune {

namespace {

// A file's bytes, or "" if it cannot be read (a missing hash file simply does not match).
std::string read_text_or_empty(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}


// Agreement with the reference: generated kernels accumulate in f32 in a tiled order, the
// reference in double in index order. The rounding error of a K-term f32 sum is about
// sqrt(K) * 6e-8 * sum|terms| (random-walk bound, Higham "Accuracy and Stability", ch. 4);
// 1e-3 relative plus 1e-4 of the output's largest magnitude covers K up to ~10^6 unit terms.
constexpr double kRelativeTolerance = 1e-3;
constexpr double kScaleTolerance = 1e-4;
// How many kernels' reference outputs stay in memory (a 1024x1024 output is 4 MiB).
constexpr std::size_t kReferenceCacheEntries = 16;

std::string hex64(std::uint64_t value) {
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(value));
  return text;
}

// The cache file name. std::hash of a string is libstdc++'s fixed-seed murmur hash: stable for a
// given perftune build, which is all a local cache needs (the compiler's identity is hashed in).
std::uint64_t source_hash(const std::string& text) { return std::hash<std::string>{}(text); }

std::string default_cache_dir() {
  if (const char* env = std::getenv("PERFTUNE_CACHE"); env && *env) return env;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) return std::string(xdg) + "/perftune";
  if (const char* home = std::getenv("HOME"); home && *home) return std::string(home) + "/.cache/perftune";
  return "/tmp/perftune-cache";
}

// First line of `compiler --version` ("g++ (Debian 12.2.0-14) 12.2.0").
std::string compiler_version(const std::string& compiler) {
  const SubprocessResult r = run_subprocess({compiler, "--version"}, "", 30);
  if (!r.ok()) throw std::runtime_error("the C++ compiler '" + compiler + "' does not run: " + r.describe());
  return r.out.substr(0, r.out.find('\n'));
}

// Why `got` differs from `want`, or empty if they agree within the tolerance.
std::string compare(const std::vector<float>& got, const std::vector<float>& want, const std::string& name) {
  if (got.size() != want.size()) return "output " + name + " has " + std::to_string(got.size()) + " elements, expected " + std::to_string(want.size());
  double scale = 0.0;
  for (float w : want)
    if (std::isfinite(w)) scale = std::max(scale, static_cast<double>(std::fabs(w)));
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double g = got[i], w = want[i];
    const bool agree = (std::isnan(g) && std::isnan(w)) || g == w ||
                       std::fabs(g - w) <= kRelativeTolerance * std::fabs(w) + kScaleTolerance * scale;
    if (!agree) {
      std::ostringstream message;
      message.precision(7);
      message << "output " << name << " differs from the reference at element " << i << ": got " << g << ", expected " << w
              << " (tolerance " << kRelativeTolerance << " relative + " << kScaleTolerance << " x max|reference| " << scale << ")";
      return message.str();
    }
  }
  return "";
}

std::vector<float> read_floats(const std::string& path, std::size_t count) {
  std::vector<float> values(count);
  std::ifstream in(path, std::ios::binary);
  in.read(reinterpret_cast<char*>(values.data()), static_cast<std::streamsize>(count * sizeof(float)));
  if (static_cast<std::size_t>(in.gcount()) != count * sizeof(float)) values.clear();
  return values;
}

}  // namespace

std::string cpu_model_name() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) != 0) continue;
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string name = line.substr(colon + 1);
    name.erase(0, name.find_first_not_of(" \t"));
    return name;
  }
  return "unknown";
}

CpuBackend::CpuBackend(CpuBackendOptions options) : options_(std::move(options)) {
  for (const auto& [what, seconds] : {std::pair{"run", options_.run_timeout_seconds}, std::pair{"compile", options_.compile_timeout_seconds}})
    if (auto problem = timeout_problem(seconds)) throw std::invalid_argument(std::string("the CPU backend's ") + what + " timeout: " + *problem);
  if (options_.compiler.empty()) options_.compiler = PERFTUNE_CXX_COMPILER;
  if (options_.runner.empty()) options_.runner = PERFTUNE_CPU_RUNNER;
  if (options_.cache_dir.empty()) options_.cache_dir = default_cache_dir();
  if (options_.compile_jobs <= 0) options_.compile_jobs = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  std::error_code error;
  std::filesystem::create_directories(options_.cache_dir, error);
  if (error) throw std::runtime_error("cannot create the kernel cache folder " + options_.cache_dir + ": " + error.message());
  if (!std::filesystem::exists(options_.runner))
    throw std::runtime_error("the CPU runner " + options_.runner + " does not exist (build the perftune_cpu_runner target)");
  const std::string version = compiler_version(options_.compiler);
  compiler_identity_ = options_.compiler + "|" + version;
  for (const std::string& flag : options_.flags) compiler_identity_ += "|" + flag;
  fingerprint_ = "cpu:" + cpu_model_name() + ":" + version;
}

CpuBackend::Compiled CpuBackend::compile(const std::string& source) {
  const std::string stem = options_.cache_dir + "/" + hex64(source_hash(compiler_identity_ + "\n" + source));
  const std::string library = stem + ".so";
  Compiled result;
  // The name says which source the library was built from, not that the file is what was built:
  // a truncated or replaced .so would be loaded and measured. Its content hash, written beside it
  // after the build, must match; otherwise it is rebuilt.
  const std::string content_hash = library + ".hash";
  if (std::filesystem::exists(library)) {
    if (read_text_or_empty(content_hash) == stable_hash_hex(read_text_or_empty(library))) {
      std::lock_guard lock(mutex_);
      ++cache_hits_;
      result.library = library;
      return result;
    }
    std::error_code ignored;
    std::filesystem::remove(library, ignored);
  }
  // Unique temporaries, then an atomic rename: concurrent tuners can share one cache folder.
  static std::atomic<long> counter{0};
  const std::string unique = "." + std::to_string(::getpid()) + "." + std::to_string(counter++);
  const std::string cpp = stem + ".cpp", temporary_cpp = stem + unique + ".cpp", temporary_so = stem + unique + ".so";
  {
    std::ofstream out(temporary_cpp);
    out << source;
    if (!out) throw std::runtime_error("cannot write " + temporary_cpp);
  }
  std::vector<std::string> argv = {options_.compiler};
  argv.insert(argv.end(), options_.flags.begin(), options_.flags.end());
  argv.insert(argv.end(), {"-o", temporary_so, temporary_cpp});
  const SubprocessResult r = run_subprocess(argv, "", options_.compile_timeout_seconds);
  result.seconds = r.wall_seconds;
  if (r.ok()) {
    write_file_atomically(content_hash, stable_hash_hex(read_text_or_empty(temporary_so)));
    std::filesystem::rename(temporary_so, library);
    std::filesystem::rename(temporary_cpp, cpp);  // kept beside the .so for debugging
    result.library = library;
  } else {
    std::error_code ignored;
    std::filesystem::remove(temporary_so, ignored);
    std::filesystem::rename(temporary_cpp, stem + ".failed.cpp", ignored);
    result.error = "compiler " + r.describe() + ": " + tail_lines(r.err, 6) + " (source " + stem + ".failed.cpp)";
  }
  std::lock_guard lock(mutex_);
  ++compiles_;
  return result;
}

const std::vector<std::vector<float>>& CpuBackend::reference(const Kernel& kernel, const std::vector<OpId>& outputs) {
  const std::string key = kernel.key() + "/" + std::to_string(options_.seed);
  if (auto it = references_.find(key); it != references_.end()) return it->second;
  if (references_.size() >= kReferenceCacheEntries) references_.erase(references_.begin());
  const auto values = interpret(kernel.body(), make_inputs(kernel.body(), options_.seed));
  std::vector<std::vector<float>> selected;
  for (OpId id : outputs) selected.push_back(values[id]);
  return references_[key] = std::move(selected);
}

std::vector<MeasureResult> CpuBackend::measure(const Kernel& kernel, const SearchSpace& space, std::span<const Config> configs) {
  std::vector<MeasureResult> results(configs.size());
  std::vector<std::optional<GeneratedKernel>> generated(configs.size());
  std::vector<bool> done(configs.size(), false);
  for (std::size_t c = 0; c < configs.size(); ++c) {
    if (!space.contains(configs[c])) {
      results[c] = MeasureResult::failure(MeasureStatus::kInvalidConfig, "config " + configs[c].to_string() + " is not in the search space");
      done[c] = true;
      continue;
    }
    try {
      generated[c] = generate_cpu_kernel(kernel, space, configs[c]);
      if (options_.transform_source) generated[c]->source = options_.transform_source(generated[c]->source);
    } catch (const UnsupportedProgram& error) {
      results[c] = MeasureResult::failure(MeasureStatus::kInvalidConfig, error.what());
      done[c] = true;
    } catch (const FusionError& error) {
      results[c] = MeasureResult::failure(MeasureStatus::kInvalidConfig, error.what());
      done[c] = true;
    } catch (const std::invalid_argument& error) {
      results[c] = MeasureResult::failure(MeasureStatus::kInvalidConfig, error.what());
      done[c] = true;
    }
  }

  // Compile every distinct source once, options_.compile_jobs at a time.
  std::map<std::string, Compiled> compiled;
  for (std::size_t c = 0; c < configs.size(); ++c)
    if (!done[c]) compiled.emplace(generated[c]->source, Compiled{});
  {
    std::vector<std::map<std::string, Compiled>::iterator> work;
    for (auto it = compiled.begin(); it != compiled.end(); ++it) work.push_back(it);
    std::atomic<std::size_t> next{0};
    std::vector<std::thread> threads;
    std::exception_ptr failure;
    std::mutex failure_mutex;
    const std::size_t jobs = std::min<std::size_t>(static_cast<std::size_t>(options_.compile_jobs), work.size());
    for (std::size_t j = 0; j < jobs; ++j)
      threads.emplace_back([&] {
        for (std::size_t i; (i = next++) < work.size();) {
          try {
            work[i]->second = compile(work[i]->first);
          } catch (...) {
            std::lock_guard lock(failure_mutex);
            failure = std::current_exception();
          }
        }
      });
    for (auto& t : threads) t.join();
    if (failure) std::rethrow_exception(failure);  // the backend itself cannot work (e.g. disk full)
  }

  std::set<std::string> compile_charged;  // a source compiled once is charged to its first config
  for (std::size_t c = 0; c < configs.size(); ++c) {
    if (done[c]) continue;
    const GeneratedKernel& g = *generated[c];
    const Compiled& build = compiled.at(g.source);
    const double compile_cost = compile_charged.insert(g.source).second ? build.seconds : 0.0;
    if (build.library.empty()) {
      results[c] = MeasureResult::failure(MeasureStatus::kCompileError, build.error, compile_cost);
      continue;
    }
    const std::string output_file = options_.cache_dir + "/run." + std::to_string(::getpid()) + ".out";
    std::vector<std::string> argv = {options_.runner, build.library, output_file, std::to_string(options_.seed),
                                     std::to_string(options_.min_repeats), std::to_string(options_.max_repeats),
                                     std::to_string(options_.target_cv), std::to_string(options_.time_budget_seconds),
                                     std::to_string(options_.min_sample_seconds), std::to_string(g.buffers.parameter_count),
                                     std::to_string(g.buffers.output_count)};
    for (std::int64_t size : g.buffers.sizes) argv.push_back(std::to_string(size));
    std::filesystem::remove(output_file);
    const SubprocessResult run = run_subprocess(argv, "", options_.run_timeout_seconds);
    const double cost = compile_cost + run.wall_seconds;
    if (run.timed_out) {
      results[c] = MeasureResult::failure(MeasureStatus::kTimeout,
                                          "kernel ran longer than " + std::to_string(options_.run_timeout_seconds) + " s (warm-up + repeats)", cost);
      continue;
    }
    if (!run.ok()) {
      results[c] = MeasureResult::failure(MeasureStatus::kRuntimeError, "kernel runner " + run.describe() + (run.err.empty() ? "" : ": " + tail_lines(run.err, 3)), cost);
      continue;
    }
    // Check against the reference.
    std::vector<OpId> outputs(g.buffers.ops.begin() + static_cast<long>(g.buffers.parameter_count),
                              g.buffers.ops.begin() + static_cast<long>(g.buffers.parameter_count + g.buffers.output_count));
    std::size_t total = 0;
    for (std::size_t o = 0; o < outputs.size(); ++o) total += static_cast<std::size_t>(g.buffers.sizes[g.buffers.parameter_count + o]);
    const std::vector<float> got = read_floats(output_file, total);
    std::filesystem::remove(output_file);
    if (got.size() != total) {
      results[c] = MeasureResult::failure(MeasureStatus::kRuntimeError, "kernel runner wrote no complete outputs", cost);
      continue;
    }
    const auto& want = reference(kernel, outputs);
    std::string problem;
    std::size_t offset = 0;
    for (std::size_t o = 0; o < outputs.size() && problem.empty(); ++o) {
      const std::size_t n = want[o].size();
      problem = compare(std::vector<float>(got.begin() + static_cast<long>(offset), got.begin() + static_cast<long>(offset + n)), want[o],
                        kernel.body().op(outputs[o]).name);
      offset += n;
    }
    if (!problem.empty()) {
      results[c] = MeasureResult::failure(MeasureStatus::kWrongResult, problem, cost);
      continue;
    }
    std::vector<double> repeats;
    std::istringstream line(run.out);
    std::string word;
    line >> word;
    for (double s; line >> s;) repeats.push_back(s);
    if (word != "seconds" || repeats.empty()) {
      results[c] = MeasureResult::failure(MeasureStatus::kRuntimeError, "kernel runner printed no timings: " + tail_lines(run.out, 2), cost);
      continue;
    }
    results[c] = MeasureResult::from_repeats(std::move(repeats), cost);
  }
  return results;
}

}  // namespace perftune
