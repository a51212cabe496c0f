#pragma once
// What a parallel probe reads (hardware/timing/parallel_guard.h): a fixed kernel's time on the worker's
// threads over its one-thread time. The one-thread reference is the fastest seen: three timings
// on first use, then one every kSerialEvery ratios, so a worker that started on a busy machine (a
// slow reference, which would make disturbed ratios read quiet) corrects it within a few configs.
// Shared by the Halide runner's probe (a Halide matmul) and the library runner's (torch's sgemm).
#include <algorithm>

namespace perftune {

class ParallelRatio {
 public:
  static constexpr long kSerialEvery = 16;

  // parallel(), serial(): seconds per call of the probe kernel on the worker's threads and on one.
  template <typename Parallel, typename Serial>
  double operator()(Parallel&& parallel, Serial&& serial) {
    const double parallel_seconds = parallel();
    const int timings = serial_seconds_ == 0 ? 3 : calls_ % kSerialEvery == 0 ? 1 : 0;
    for (int t = 0; t < timings; ++t) {
      const double s = serial();
      serial_seconds_ = serial_seconds_ == 0 ? s : std::min(serial_seconds_, s);
    }
    ++calls_;
    return parallel_seconds / serial_seconds_;
  }

 private:
  double serial_seconds_ = 0;
  long calls_ = 0;
};

}  // namespace perftune
