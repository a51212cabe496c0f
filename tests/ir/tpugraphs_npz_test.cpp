#include <catch2/catch.hpp>

#include "ir/input_error.h"
#include "ir/source.h"
#include "ir/tpugraphs_npz.h"
#include "test_support.h"

using namespace perftune;

namespace {

// A TpuGraphs tile file for: p0, p1 (f32[4,6]) -> multiply -> reduce (f32[4], the root), with
// `runtimes.size()` configs of output bound (2 * (j + 1)).
Npz tile_arrays(const std::vector<std::int64_t>& runtimes) {
  constexpr std::size_t w = kTpuGraphsNodeFeatures;
  std::vector<float> feat(4 * w, 0.0f);
  auto set_shape = [&](std::size_t u, std::vector<float> dims) {
    feat[u * w + 13] = 1.0f;  // f32 in the element-type one-hot (columns 2-20)
    for (std::size_t k = 0; k < dims.size(); ++k) feat[u * w + 21 + k] = dims[k];
  };
  set_shape(0, {4, 6});
  set_shape(1, {4, 6});
  feat[1 * w + 30] = 1.0f;  // parameter_number
  set_shape(2, {4, 6});
  set_shape(3, {4});
  feat[3 * w + 0] = 1.0f;  // is_root
  feat[2 * w + 134] = 0.0f;  // a column-major layout for the multiply: minor_to_major {0,1}
  feat[2 * w + 135] = 1.0f;
  const std::size_t c = runtimes.size();
  std::vector<float> config(c * kTpuGraphsConfigFeatures, 0.0f);
  for (std::size_t j = 0; j < c; ++j) config[j * kTpuGraphsConfigFeatures + 8] = static_cast<float>(2 * (j + 1));
  Npz arrays;
  arrays["node_feat"] = NpyArray::from_floats(feat, {4, static_cast<std::int64_t>(w)});
  arrays["node_opcode"] = NpyArray::from_ints({tpugraphs_opcode_id("parameter"), tpugraphs_opcode_id("parameter"),
                                               tpugraphs_opcode_id("multiply"), tpugraphs_opcode_id("reduce")},
                                              {4}, 'u', 1);
  // Row [u, v]: u consumes the output of v.
  arrays["edge_index"] = NpyArray::from_ints({2, 0, 2, 1, 3, 2}, {3, 2});
  arrays["config_feat"] = NpyArray::from_floats(config, {static_cast<std::int64_t>(c), static_cast<std::int64_t>(kTpuGraphsConfigFeatures)});
  arrays["config_runtime"] = NpyArray::from_ints(runtimes, {static_cast<std::int64_t>(c)});
  arrays["config_runtime_normalizers"] = NpyArray::from_ints(std::vector<std::int64_t>(c, 1000), {static_cast<std::int64_t>(c)});
  return arrays;
}

}  // namespace

TEST_CASE("a TpuGraphs tile npz written by the test loads back as one measured kernel") {
  const std::string dir = scratch_dir("tpugraphs");
  write_npz(dir + "/toy_kernel.npz", tile_arrays({900, 700, 800}));
  const Corpus corpus = load_source(dir + "/toy_kernel.npz");
  REQUIRE(corpus.format == "tpugraphs-npz");
  REQUIRE(corpus.kernels.size() == 1);
  const MeasuredKernel& k = corpus.kernels[0];
  REQUIRE(k.kernel.name() == "toy_kernel");
  const Program& body = k.kernel.body();
  REQUIRE(body.size() == 4);
  REQUIRE(body.op(2).opcode == "multiply");
  REQUIRE(body.operands(2) == std::vector<OpId>{0, 1});  // edge direction: producer v -> consumer u
  REQUIRE(body.root() == 3);
  REQUIRE(body.op(3).shape.dims == std::vector<std::int64_t>{4});
  REQUIRE(body.op(2).shape.minor_to_major == std::vector<std::int64_t>{0, 1});
  REQUIRE(body.op(1).parameter_number == 1);
  REQUIRE(k.kernel.parameters().size() == 2);
  REQUIRE(k.space->knob_names() == std::vector<std::string>{"tile.out.0"});
  REQUIRE(k.measurements.size() == 3);
  REQUIRE(k.measurements[1].config.values == std::vector<std::int64_t>{4});
  REQUIRE(k.measurements[*k.best_index()].result.seconds == Approx(700e-9));
}

TEST_CASE("the Python-written deflated fixture imports too") {
  const Corpus corpus = load_source(source_path("tests/fixtures/tpugraphs_tile_deflated.npz"));
  const MeasuredKernel& k = corpus.kernels.at(0);
  REQUIRE(k.kernel.body().op(2).opcode == "add");
  REQUIRE(k.space->knob_names() == std::vector<std::string>{"tile.out.0", "tile.out.1"});
  REQUIRE(k.measurements.at(*k.best_index()).config.values == std::vector<std::int64_t>{4, 16});
}

TEST_CASE("opcode ids map to XLA names, unknown ids to opcode.<id>") {
  REQUIRE(tpugraphs_opcode_name(26) == "convolution");
  REQUIRE(tpugraphs_opcode_name(34) == "dot");
  REQUIRE(tpugraphs_opcode_name(120) == "tan");
  REQUIRE(tpugraphs_opcode_name(250) == "opcode.250");
  REQUIRE(tpugraphs_opcode_id("fusion") == 41);
}

TEST_CASE("bad TpuGraphs arrays are named") {
  Npz arrays = tile_arrays({900, 700});
  SECTION("missing array") {
    arrays.erase("config_runtime");
    REQUIRE_THROWS_WITH(tpugraphs_corpus(arrays, "t.npz", "t"), Catch::Contains("t.npz: array 'config_runtime'"));
  }
  SECTION("float opcodes") {
    arrays["node_opcode"] = NpyArray::from_floats({1, 2, 3, 4}, {4});
    REQUIRE_THROWS_WITH(tpugraphs_corpus(arrays, "t.npz", "t"), Catch::Contains("integer dtype"));
  }
  SECTION("edge to a missing node") {
    arrays["edge_index"] = NpyArray::from_ints({2, 9}, {1, 2});
    REQUIRE_THROWS_WITH(tpugraphs_corpus(arrays, "t.npz", "t"), Catch::Contains("edge_index row 0"));
  }
  SECTION("a cycle") {
    arrays["edge_index"] = NpyArray::from_ints({2, 3, 3, 2}, {2, 2});
    REQUIRE_THROWS_WITH(tpugraphs_corpus(arrays, "t.npz", "t"), Catch::Contains("cycle"));
  }
  SECTION("negative runtime") {
    arrays["config_runtime"] = NpyArray::from_ints({900, -1}, {2});
    REQUIRE_THROWS_WITH(tpugraphs_corpus(arrays, "t.npz", "t"), Catch::Contains("config_runtime[1]"));
  }
  SECTION("no configs") {
    REQUIRE_THROWS_WITH(tpugraphs_corpus(tile_arrays({}), "t.npz", "t"), Catch::Contains("empty space"));
  }
}
