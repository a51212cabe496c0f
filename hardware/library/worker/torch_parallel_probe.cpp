#include "hardware/library/worker/torch_parallel_probe.h"

#include <chrono>

namespace perftune {
namespace {

// After one-thread work the first two or three 2-thread calls run at the one-thread speed on this
// project's 2-vCPU machines (the idle vCPU wakes slowly). Timed right after a thread-count switch,
// a 256^3 or 512^3 probe reads that wake-up, not a disturbance; a 1024^3 one warmed by three calls
// reads about 1 / threads on a quiet machine.
constexpr std::int64_t kSize = 1024;
constexpr int kCalls = 2;
constexpr int kParallelWarmUp = 3;

}  // namespace

TorchParallelProbe::TorchParallelProbe(int threads)
    : threads_(threads), a_(torch::rand({kSize, kSize})), b_(torch::rand({kSize, kSize})), out_(torch::empty({kSize, kSize})) {}

double TorchParallelProbe::seconds_per_call(int threads) {
  torch::NoGradGuard no_grad;
  const auto calls = [this](int n) {
    for (int c = 0; c < n; ++c) torch::mm_out(out_, a_, b_);
  };
  torch::set_num_threads(threads);
  calls(threads > 1 ? kParallelWarmUp : 1);
  const auto start = std::chrono::steady_clock::now();
  calls(kCalls);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / kCalls;
  if (threads != threads_) {  // back on the runner's threads, up to speed for the timing that follows
    torch::set_num_threads(threads_);
    calls(kParallelWarmUp);
  }
  return seconds;
}

double TorchParallelProbe::ratio() {
  return ratio_([this] { return seconds_per_call(threads_); }, [this] { return seconds_per_call(1); });
}

}  // namespace perftune
