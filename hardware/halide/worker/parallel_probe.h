#pragma once
// The probe of hardware/timing/parallel_guard.h in the Halide runner: a 256^3 matmul, one pipeline
// parallel over row tiles and one serial, JIT-compiled once per worker (on its first use).
// ratio() times 20 calls of the parallel one against the serial one's fastest
// (hardware/timing/parallel_ratio.h: three timings on first use, then one every 16 ratios, one per 8
// timings): a few milliseconds per probe, small beside a timing.
#include <Halide.h>

#include <memory>

#include "hardware/timing/parallel_ratio.h"

namespace perftune::halide {

class ParallelProbe {
 public:
  ParallelProbe();
  ~ParallelProbe();
  double ratio();

 private:
  struct Pipelines;
  double seconds_per_call(Halide::Pipeline& pipeline);
  std::unique_ptr<Pipelines> pipelines_;  // compiled on first use
  ParallelRatio ratio_;
};

}  // namespace perftune::halide
