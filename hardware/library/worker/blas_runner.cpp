// perftune_blas_runner: times the library reference of a kernel (hardware/library/blas_problem.h) with
// torch on this CPU, in a child process as the Halide runner does, so the tuner does not share
// its process (or its thread pools) with torch's.
//
//   perftune_blas_runner THREADS
//
// Reads one JSON request per line: {"calls": [{"kind": "gemm", "batch": B, "m": M, "k": K, "n":
// N} | {"kind": "conv", "input": [N, C, ...], "weight": [O, C, ...], "stride": [...], "padding":
// [...], "dilation": [...]}, ...], "timing": {...as the Halide runner's...}, "threads": T,
// "parallel_guard": N}, times the calls run in sequence on T threads (default THREADS), and answers
// {"status": "ok", "repeats": [T1, ...]} or {"status": "runtime_error", "message": "..."}. On
// more than one thread the timing is guarded as the Halide runner's is (hardware/timing/parallel_guard.h,
// with torch's own probe: hardware/library/worker/torch_parallel_probe.h; N caps the attempts, 0 = no guard), and
// the answer also holds "attempts", "parallel_ratio" and "disturbed" when every attempt was.
// torch::mm / bmm call the system BLAS (OpenBLAS with libopenblas0-openmp), torch's f32
// convolutions oneDNN; both on T OpenMP threads. An ok answer also names "openblas_core", the
// OpenBLAS kernels the GEMMs ran ("" for another BLAS).
#include <dlfcn.h>
#include <unistd.h>
#include <torch/torch.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "hardware/library/worker/torch_parallel_probe.h"
#include "hardware/timing/parallel_guard.h"
#include "hardware/timing/sample_timer.h"
#include "hardware/timing/steady_memory.h"

namespace {

using nlohmann::json;

// The OpenBLAS core type whose kernels torch's BLAS runs, or "" when the BLAS is not OpenBLAS.
std::string openblas_core() {
  using CoreName = char* (*)();
  const auto core_name = reinterpret_cast<CoreName>(dlsym(RTLD_DEFAULT, "openblas_get_corename"));
  return core_name ? std::string(core_name()) : std::string();
}

// OpenBLAS picks its kernels when it loads, from the CPU's family and model, and takes a CPU newer
// than its release knows for a pre-AVX2 core (Debian's 0.3.21 runs its SSE3 "Prescott" kernels on
// a Xeon of family 6 model 207, several times below its best). The library peer is to run at its
// best, so then the runner starts again with OPENBLAS_CORETYPE naming the newest kernels this CPU
// executes. A user's own OPENBLAS_CORETYPE is kept.
void run_openblas_at_its_best(char** argv) {
  if (std::getenv("OPENBLAS_CORETYPE")) return;
  static const std::set<std::string> kBeforeAvx2 = {"Prescott", "Core2", "Penryn", "Dunnington", "Nehalem", "Atom", "Sandybridge",
                                                    "Katmai", "Coppermine", "Northwood", "Banias", "Opteron", "Opteron_SSE3",
                                                    "Barcelona", "Bobcat", "Bulldozer", "Piledriver", "Steamroller", "Nano"};
  if (!kBeforeAvx2.count(openblas_core())) return;
  const bool avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                      __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq");
  const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  if (!avx512 && !avx2) return;
  setenv("OPENBLAS_CORETYPE", avx512 ? "SkylakeX" : "Haswell", 1);
  execv("/proc/self/exe", argv);  // only returns on failure: then the detected kernels run
}

// One library call on operands made once (random values: the time does not depend on them).
std::function<void()> library_call(const json& call) {
  const std::string kind = call.at("kind");
  if (kind == "gemm") {
    const std::int64_t batch = call.at("batch"), m = call.at("m"), k = call.at("k"), n = call.at("n");
    if (batch > 1) {
      return [a = torch::rand({batch, m, k}), b = torch::rand({batch, k, n}), out = torch::empty({batch, m, n})]() mutable {
        torch::bmm_out(out, a, b);
      };
    }
    return [a = torch::rand({m, k}), b = torch::rand({k, n}), out = torch::empty({m, n})]() mutable { torch::mm_out(out, a, b); };
  }
  if (kind == "conv") {
    return [input = torch::rand(call.at("input").get<std::vector<std::int64_t>>()),
            weight = torch::rand(call.at("weight").get<std::vector<std::int64_t>>()),
            stride = call.at("stride").get<std::vector<std::int64_t>>(), padding = call.at("padding").get<std::vector<std::int64_t>>(),
            dilation = call.at("dilation").get<std::vector<std::int64_t>>(), groups = call.value("groups", std::int64_t{1})] {
      torch::convolution(input, weight, {}, stride, padding, dilation, false, {0}, groups);
    };
  }
  throw std::runtime_error("unknown kind " + kind);
}

json time_calls(const json& request, const perftune::ParallelGuard& guard, perftune::TorchParallelProbe& probe) {
  torch::NoGradGuard no_grad;
  std::vector<std::function<void()>> calls;
  for (const json& call : request.at("calls")) calls.push_back(library_call(call));
  const auto run = [&] {
    for (const auto& call : calls) call();
  };
  using Clock = std::chrono::steady_clock;
  // Untimed: the library's first call allocates and packs, and in a fresh runner also starts its
  // thread pool and faults its code in. A warm-up over the budget is the only sample
  // (sample_timer.h), and a cold first call can take thousands of times a warm one.
  run();
  const perftune::SampleTiming timing = perftune::SampleTiming::from_json(request.value("timing", json::object()));
  const auto time = [&](int /*attempt*/) {
    const auto start = Clock::now();
    run();  // warm-up (after the probe's calls, too): what time_samples plans the samples by
    return perftune::time_samples(run, std::chrono::duration<double>(Clock::now() - start).count(), timing);
  };
  json reply = {{"status", "ok"}, {"openblas_core", openblas_core()}};
  if (guard.threads > 1 && guard.max_attempts > 0)
    perftune::write_guarded(reply, perftune::guarded_samples(guard, [&] { return probe.ratio(); }, time, perftune::ParallelGuard::pause));
  else
    reply["repeats"] = time(1);
  return reply;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s THREADS\n", argv[0]);
    return 2;
  }
  run_openblas_at_its_best(argv);
  const int threads = std::stoi(argv[1]);
  perftune::reuse_freed_memory();  // as the Halide runner: the library's workspace is reused
  std::string line;
  while (std::getline(std::cin, line)) {
    json reply;
    try {
      const json request = json::parse(line);
      const int request_threads = request.value("threads", threads);
      torch::set_num_threads(request_threads);
      perftune::TorchParallelProbe probe(request_threads);
      reply = time_calls(request, {request_threads, request.value("parallel_guard", perftune::ParallelGuard{}.max_attempts)}, probe);
    } catch (const std::exception& error) {
      reply = {{"status", "runtime_error"}, {"message", std::string("bad request: ") + error.what()}};
    }
    perftune::release_freed_memory();
    std::cout << reply.dump() << "\n" << std::flush;
  }
  return 0;
}
