#pragma once
// Synthetic measured kernels with a known runtime law over tile.out.0 / tile.out.1, for tests of
// the featurizer, training and online update. A test fake: it lives in tests/ only.
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "ir/corpus.h"
#include "ir/device_spec.h"
#include "ir/fusion.h"
#include "ir/knob_roles.h"
#include "ir/random.h"
#include "surrogate/gnn/gnn_params.h"

namespace perftune::testing {

// parameter x, parameter w -> dot -> add(bias) -> exponential: a 5-node kernel with output [m, n].
inline Kernel small_kernel(const std::string& name, std::int64_t m, std::int64_t n, std::int64_t k,
                           const std::string& tail_opcode = "exponential") {
  Program p(name);
  Op x{.name = "x", .opcode = "parameter", .shape = make_shape(ElementType::kF32, {m, k})};
  x.parameter_number = 0;
  Op w{.name = "w", .opcode = "parameter", .shape = make_shape(ElementType::kF32, {k, n})};
  w.parameter_number = 1;
  Op b{.name = "b", .opcode = "parameter", .shape = make_shape(ElementType::kF32, {m, n})};
  b.parameter_number = 2;
  const OpId xi = p.add_op(x), wi = p.add_op(w), bi = p.add_op(b);
  Op dot{.name = "dot", .opcode = "dot", .shape = make_shape(ElementType::kF32, {m, n})};
  dot.dot = DotDims{{1}, {0}, {}, {}};
  const OpId d = p.add_op(dot, {xi, wi});
  const OpId a = p.add_op(Op{.name = "add", .opcode = "add", .shape = make_shape(ElementType::kF32, {m, n})}, {d, bi});
  p.add_op(Op{.name = "out", .opcode = tail_opcode, .shape = make_shape(ElementType::kF32, {m, n})}, {a});
  return Kernel(name, std::move(p));
}

// Runtime law: per-tile overhead plus a spill penalty past 64 KiB of f32 tile; optimum in the middle.
inline double synthetic_seconds(std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t t0, std::int64_t t1) {
  const double tiles = std::ceil(double(m) / t0) * std::ceil(double(n) / t1);
  const double tile_elements = double(t0) * double(t1);
  const double spill = tile_elements > 16384 ? tile_elements / 16384 : 1.0;
  return 1e-6 * (tiles * 4.0 + double(m) * n * k / 1e5 * spill);
}

// A kernel with every (t0, t1) in powers of two from 8 to 256 measured under synthetic_seconds;
// `failures` configs (the first ones) are recorded as compile errors.
inline MeasuredKernel measured_kernel(const std::string& name, std::int64_t m, std::int64_t n, std::int64_t k,
                                      std::size_t failures = 0) {
  MeasuredKernel measured;
  measured.kernel = small_kernel(name, m, n, k);
  measured.device = "synthetic";
  const std::vector<std::int64_t> tiles{8, 16, 32, 64, 128, 256};
  measured.space = std::make_shared<SearchSpace>(std::vector<Knob>{{tile_out_knob(0), tiles}, {tile_out_knob(1), tiles}});
  for (std::int64_t t0 : tiles)
    for (std::int64_t t1 : tiles) {
      Measurement m_{Config{{t0, t1}}, {}};
      if (measured.measurements.size() < failures)
        m_.result = MeasureResult::failure(MeasureStatus::kCompileError, "synthetic failure");
      else
        m_.result = MeasureResult::from_repeats({synthetic_seconds(m, n, k, t0, t1)}, 0.0);
      measured.measurements.push_back(m_);
    }
  return measured;
}

// A handful of kernels of different shapes.
inline std::vector<MeasuredKernel> synthetic_corpus(std::size_t count, std::uint64_t seed) {
  Rng rng(seed);
  const std::vector<std::int64_t> sizes{128, 256, 512, 1024};
  std::vector<MeasuredKernel> kernels;
  for (std::size_t i = 0; i < count; ++i)
    kernels.push_back(measured_kernel("k" + std::to_string(i), sizes[uniform_index(rng, 4)], sizes[uniform_index(rng, 4)],
                                      sizes[uniform_index(rng, 4)], i % 3 == 0 ? 2 : 0));
  return kernels;
}

// A small network that trains in a fraction of a second.
inline GnnParams small_gnn_params(int hidden, int embedding, const std::string& join = "late") {
  GnnParams params;
  params.hidden = hidden;
  params.opcode_embedding = embedding;
  params.layers = 2;
  params.join = join;
  params.min_opcode_count = 1;
  return params;
}

// A CPU-like device (a cache: no tile is infeasible) or a TPU-like one with a 64 KiB scratchpad,
// small enough that measured_kernel()'s large tiles do not fit; rates of the order of one core.
inline DeviceSpec small_device(bool scratchpad) {
  DeviceSpec spec;
  spec.name = scratchpad ? "test-tpu" : "test-cpu";
  spec.kind = scratchpad ? "tpu" : "cpu";
  spec.matrix_flops[ElementType::kF32] = 1e12;
  spec.vector_flops[ElementType::kF32] = 1e11;
  spec.memory_bandwidth = 1e11;
  spec.onchip_bytes = scratchpad ? 64 << 10 : 1 << 20;
  spec.onchip_is_scratchpad = scratchpad;
  spec.matrix_unit = scratchpad ? std::array<std::int64_t, 2>{128, 128} : std::array<std::int64_t, 2>{1, 16};
  spec.vector_tile = scratchpad ? std::array<std::int64_t, 2>{8, 128} : std::array<std::int64_t, 2>{1, 16};
  spec.launch_overhead = 1e-6;
  spec.tile_overhead = 1e-7;
  return spec;
}

inline std::vector<const MeasuredKernel*> pointers(const std::vector<MeasuredKernel>& kernels) {
  std::vector<const MeasuredKernel*> out;
  for (const auto& k : kernels) out.push_back(&k);
  return out;
}

// A program measured under fusion configs: no fusion, greedy elementwise fusion and
// single-edge fusions; runtime = 1e-6 * (ops + parameters counted once per kernel that reads them).
inline MeasuredKernel fusion_measurements(const Program& program) {
  MeasuredKernel measured;
  measured.kernel = Kernel(program.name(), program);
  measured.device = "synthetic";
  const auto edges = fusible_edges(program);
  std::vector<Knob> knobs;
  for (std::size_t e : edges) knobs.push_back({fuse_knob(e), {0, 1}});
  measured.space = std::make_shared<SearchSpace>(knobs);
  std::vector<FusionConfig> fusions{FusionConfig::none(program), FusionConfig::greedy_elementwise(program)};
  for (std::size_t e : edges) {
    FusionConfig one = FusionConfig::none(program);
    one.fused[e] = true;
    fusions.push_back(one);
  }
  for (const FusionConfig& fusion : fusions) {
    if (!is_legal(program, fusion)) continue;
    Config config;
    for (std::size_t e : edges) config.values.push_back(fusion.fused[e] ? 1 : 0);
    double seconds = 0;
    for (const FusedKernel& k : partition(program, fusion).kernels) seconds += 1e-6 * double(k.kernel.body().size());
    measured.measurements.push_back({config, MeasureResult::from_repeats({seconds}, 0.0)});
  }
  return measured;
}

}  // namespace perftune::testing

