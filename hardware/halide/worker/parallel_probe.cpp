#include "hardware/halide/worker/parallel_probe.h"

#include <chrono>

namespace perftune::halide {
namespace {

constexpr int kSize = 256;
constexpr int kCalls = 20;

// out = A x B, blocked as a tuned CPU schedule is (a 64 x 16 accumulator tile per task), so its
// speed-up on the machine's threads is what a tuned kernel's would be.
Halide::Pipeline matmul(const Halide::Buffer<float>& a, const Halide::Buffer<float>& b, bool parallel) {
  Halide::Var i("i"), j("j"), io("io"), jo("jo"), ii("ii"), ji("ji");
  Halide::RDom k(0, kSize);
  Halide::Func product("probe_product"), out("probe_out");
  product(j, i) = 0.f;
  product(j, i) += a(k, i) * b(j, k);
  out(j, i) = product(j, i);
  out.tile(j, i, jo, io, ji, ii, 64, 16).vectorize(ji, 16);
  if (parallel) out.parallel(io);
  product.compute_at(out, jo).vectorize(j, 16);
  product.update().reorder(j, i, k).vectorize(j, 16).unroll(i, 4);
  return Halide::Pipeline(out);
}

}  // namespace

struct ParallelProbe::Pipelines {
  Halide::Buffer<float> a{kSize, kSize}, b{kSize, kSize}, out{kSize, kSize};
  Halide::Pipeline serial, parallel;
  Pipelines() {
    a.fill(1.f);
    b.fill(0.5f);
    serial = matmul(a, b, false);
    parallel = matmul(a, b, true);
    serial.compile_jit();
    parallel.compile_jit();
  }
};

ParallelProbe::ParallelProbe() = default;
ParallelProbe::~ParallelProbe() = default;

double ParallelProbe::seconds_per_call(Halide::Pipeline& pipeline) {
  pipeline.realize(pipelines_->out);  // warm
  const auto start = std::chrono::steady_clock::now();
  for (int c = 0; c < kCalls; ++c) pipeline.realize(pipelines_->out);
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / kCalls;
}

double ParallelProbe::ratio() {
  if (!pipelines_) pipelines_ = std::make_unique<Pipelines>();
  return ratio_([this] { return seconds_per_call(pipelines_->parallel); }, [this] { return seconds_per_call(pipelines_->serial); });
}

}  // namespace perftune::halide
