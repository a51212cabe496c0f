// perftune_blas_runner: times the library reference of a kernel (hardware/blas_problem.h) with
// torch on this CPU, in a child process as the Halide runner does, so the tuner does not share
// its process (or its thread pools) with torch's.
//
//   perftune_blas_runner THREADS
//
// Reads one JSON request per line: {"calls": [{"kind": "gemm", "batch": B, "m": M, "k": K, "n":
// N} | {"kind": "conv", "input": [N, C, ...], "weight": [O, C, ...], "stride": [...], "padding":
// [...], "dilation": [...]}, ...], "timing": {...as the Halide runner's...}}, times the calls run
// in sequence, and answers {"status": "ok", "repeats": [T1, ...]} or {"status":
// "runtime_error", "message": "..."}.
// torch::mm / bmm call the system BLAS (OpenBLAS with libopenblas0-openmp), torch's f32
// convolutions oneDNN; both use THREADS OpenMP threads.
#include <torch/torch.h>

#include <chrono>
#include <cstdio>
#include <functional>
#include <iostream>
#include <string>

#include <nlohmann/json.hpp>

#include "hardware/runner/sample_timer.h"
#include "hardware/runner/steady_memory.h"

namespace {

using nlohmann::json;

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
            dilation = call.at("dilation").get<std::vector<std::int64_t>>()] {
      torch::convolution(input, weight, {}, stride, padding, dilation, false, {0}, 1);
    };
  }
  throw std::runtime_error("unknown kind " + kind);
}

json time_calls(const json& request) {
  torch::NoGradGuard no_grad;
  std::vector<std::function<void()>> calls;
  for (const json& call : request.at("calls")) calls.push_back(library_call(call));
  const auto run = [&] {
    for (const auto& call : calls) call();
  };
  using Clock = std::chrono::steady_clock;
  // Untimed: the library's first call allocates and packs, and in a fresh runner also starts its
  // thread pool and faults its code in. A warm-up over the budget is the only sample
  // (sample_timer.h), and a demo once recorded a 200 us pair of sgemm calls at 1.67 s.
  run();
  const auto start = Clock::now();
  run();  // warm-up: what time_samples plans the samples by
  const double warm_up = std::chrono::duration<double>(Clock::now() - start).count();
  const auto samples = perftune::time_samples(run, warm_up, perftune::SampleTiming::from_json(request.value("timing", json::object())));
  return {{"status", "ok"}, {"repeats", samples}};
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s THREADS\n", argv[0]);
    return 2;
  }
  torch::set_num_threads(std::stoi(argv[1]));
  perftune::reuse_freed_memory();  // as the Halide runner: the library's workspace is reused
  std::string line;
  while (std::getline(std::cin, line)) {
    json reply;
    try {
      reply = time_calls(json::parse(line));
    } catch (const std::exception& error) {
      reply = {{"status", "runtime_error"}, {"message", std::string("bad request: ") + error.what()}};
    }
    perftune::release_freed_memory();
    std::cout << reply.dump() << "\n" << std::flush;
  }
  return 0;
}
