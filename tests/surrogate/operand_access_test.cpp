#include <catch2/catch.hpp>

#include "ir/program.h"
#include "surrogate/features/config_features.h"
#include "surrogate/features/kernel_features.h"
#include "surrogate/features/operand_access.h"
#include "op_builders.h"

using namespace perftune;
using namespace perftune::test;

namespace {

// C[m, n] = A[m, k] B[k, n] + bias[n]: A is read once per row of a register block (a broadcast
// scalar), B and the bias once per block (shared vectors).
Program matmul_bias() {
  Program body("matmul");
  const OpId a = body.add_op(parameter("a", 0, f32({64, 32})));
  const OpId b = body.add_op(parameter("b", 1, f32({32, 48})));
  const OpId bias = body.add_op(parameter("bias", 2, f32({48})));
  Op dot = make_op("dot", "dot", f32({64, 48}));
  dot.dot = DotDims{{1}, {0}, {}, {}};
  const OpId product = body.add_op(dot, {a, b});
  Op broadcast = make_op("bcast", "broadcast", f32({64, 48}));
  broadcast.dimensions = {1};
  const OpId row = body.add_op(broadcast, {bias});
  body.add_op(make_op("add", "add", f32({64, 48})), {product, row});
  return body;
}

// A 3x3 convolution in NCHW (output [1, 8, 30, 30]) or NHWC (output [1, 30, 30, 8]).
Program convolution(bool channels_first) {
  Program body(channels_first ? "nchw" : "nhwc");
  const OpId input = body.add_op(parameter("in", 0, channels_first ? f32({1, 4, 32, 32}) : f32({1, 32, 32, 4})));
  const OpId weights = body.add_op(parameter("w", 1, channels_first ? f32({8, 4, 3, 3}) : f32({3, 3, 4, 8})));
  Op conv = make_op("conv", "convolution", channels_first ? f32({1, 8, 30, 30}) : f32({1, 30, 30, 8}));
  conv.convolution = channels_first ? ConvolutionDims{0, 1, {2, 3}, 1, 0, {2, 3}, 0, 1, {2, 3}}
                                    : ConvolutionDims{0, 3, {1, 2}, 2, 3, {0, 1}, 0, 3, {1, 2}};
  body.add_op(conv, {input, weights});
  return body;
}

}  // namespace

TEST_CASE("a dot's inputs follow its batch and free dimensions, broadcasts their dimensions") {
  const Program body = matmul_bias();
  const auto dims = input_output_dimensions(body);
  CHECK(dims[0] == 0b01);  // a[m, k]: rows
  CHECK(dims[1] == 0b10);  // b[k, n]: columns
  CHECK(dims[2] == 0b10);  // bias[n], broadcast along rows
  CHECK(register_block_inputs(body) == RegisterBlockInputs{0, 1, 2});
}

TEST_CASE("a transposed input swaps the dimensions it follows") {
  Program body("transpose");
  const OpId x = body.add_op(parameter("x", 0, f32({16, 8, 4})));
  Op transpose = make_op("t", "transpose", f32({4, 16, 8}));
  transpose.dimensions = {2, 0, 1};  // result dim i is operand dim dimensions[i]
  body.add_op(transpose, {x});
  CHECK(input_output_dimensions(body)[x] == 0b111);
  Program reduce("reduce");
  const OpId y = reduce.add_op(parameter("y", 0, f32({16, 8, 4})));
  const OpId init = reduce.add_op(parameter("init", 1, f32({})));
  Op sum = make_op("sum", "reduce", f32({16, 4}));
  sum.dimensions = {1};
  reduce.add_op(sum, {y, init});
  CHECK(input_output_dimensions(reduce)[y] == 0b11);  // dims 0 and 2 of y are result dims 0 and 1
  CHECK(input_output_dimensions(reduce)[init] == 0);
  CHECK(register_block_inputs(reduce) == RegisterBlockInputs{1, 0, 0});
}

TEST_CASE("an NCHW convolution reads an input vector per unrolled row, NHWC a broadcast scalar") {
  const Program nchw = convolution(true);
  CHECK(input_output_dimensions(nchw)[0] == 0b1101);  // batch, rows, columns; not the output feature
  CHECK(input_output_dimensions(nchw)[1] == 0b0010);  // weights: the output feature only
  CHECK(register_block_inputs(nchw) == RegisterBlockInputs{1, 0, 0});
  const Program nhwc = convolution(false);
  CHECK(register_block_inputs(nhwc) == RegisterBlockInputs{0, 1, 1});
}

TEST_CASE("the register block's features tell a wide block on a matmul from one on an NCHW convolution") {
  const SearchSpace space({{tile_out_knob(2), {8, 16, 32}}, {tile_out_knob(3), {8, 16, 32}}, {"vector", {1, 16, 32}}, {"unroll", {1, 8}}});
  const FeatureVocabulary vocabulary;
  const Kernel nchw_kernel("nchw", convolution(true));
  const auto nchw = featurize_kernel(nchw_kernel, vocabulary);
  const ConfigFeaturizer featurizer(nchw, space, vocabulary);
  // 32 lanes x 8 rows; the same asked of a 16-wide tile (16 lanes); 16 lanes, one row.
  const std::vector<Config> configs{Config{{8, 32, 32, 8}}, Config{{8, 16, 32, 8}}, Config{{8, 32, 16, 1}}};
  std::vector<float> out(configs.size() * kConfigFeatureWidth);
  featurizer.featurize(configs, out);
  const auto block = [&](std::size_t config, std::size_t feature) {
    return out[config * kConfigFeatureWidth + kScheduleFeatureOffset + feature];
  };
  const auto log_of = [](double v) { return Approx(std::log2(1.0 + v) * kLogScale); };
  CHECK(block(0, 0) == 1.0f);
  CHECK(block(0, 1) == log_of(32));
  CHECK(block(1, 1) == log_of(16));  // the tile caps the lanes
  CHECK(block(0, 2) == log_of(8));
  CHECK(block(0, 3) == log_of(8 * 32 * 4));  // accumulator bytes
  CHECK(block(0, 4) == log_of(8 * 32 * 4));  // an input row per unrolled row
  CHECK(block(2, 4) == log_of(16 * 4));
  CHECK(block(0, 5) == log_of(0));
  CHECK(block(0, 7) == Approx(1.0 - 30.0 / 32.0));  // a 30-wide row in 32-lane vectors

  const Kernel nhwc_kernel("nhwc", convolution(false));
  const ConfigFeaturizer nhwc(featurize_kernel(nhwc_kernel, vocabulary), space, vocabulary);
  const std::vector<Config> nhwc_configs{Config{{8, 8, 32, 8}}};  // 8 output features in one tile
  nhwc.featurize(nhwc_configs, std::span<float>(out.data(), kConfigFeatureWidth));
  CHECK(block(0, 4) == log_of(0));
  CHECK(block(0, 5) == log_of(8));      // a broadcast scalar per row
  CHECK(block(0, 6) == log_of(8 * 4));  // the weights' vector, 8 output features wide
  CHECK(block(0, 1) == log_of(8));      // the tile caps the lanes
  CHECK(block(0, 7) == 0.0f);

  const SearchSpace tiles_only({{tile_out_knob(2), {8, 16, 32}}});
  const ConfigFeaturizer untouched(nchw, tiles_only, vocabulary);
  std::vector<float> row(kConfigFeatureWidth);
  untouched.featurize(std::vector<Config>{Config{{16}}}, row);
  CHECK(row[kScheduleFeatureOffset] == 0.0f);  // no vector or unroll knob: the block stays empty
}
