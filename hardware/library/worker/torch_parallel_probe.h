#pragma once
// The probe of hardware/timing/parallel_guard.h in the library runner: torch's sgemm (OpenBLAS) of two
// 1024 x 1024 matrices, 2 calls timed on the runner's threads against one thread
// (torch::set_num_threads(1) for the serial timing, then back; three times on first use), as
// hardware/timing/parallel_ratio.h reads it. The library runs on OpenMP threads, not
// Halide's pool, so the library's own pool is what is probed.
#include <torch/torch.h>

#include "hardware/timing/parallel_ratio.h"

namespace perftune {

class TorchParallelProbe {
 public:
  explicit TorchParallelProbe(int threads);
  double ratio();

 private:
  double seconds_per_call(int threads);
  int threads_;
  torch::Tensor a_, b_, out_;
  ParallelRatio ratio_;
};

}  // namespace perftune
