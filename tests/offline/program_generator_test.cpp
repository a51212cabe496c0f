// The program generator: reproducible, within its limits, varied, and every program it writes is
// one the Halide backend compiles and runs to the reference interpreter's values.
#include "offline/program_generator.h"

#include <filesystem>
#include <fstream>
#include <set>

#include "hardware/halide/halide_schedule.h"
#include "hardware/hardware_test_support.h"
#include "ir/input_error.h"
#include "ir/kernel.h"

namespace perftune {
namespace {

GeneratorSpec small_spec() {
  GeneratorSpec spec = default_generator_spec();
  spec.max_elements = 1 << 14;
  spec.max_flops = 4e6;
  return spec;
}

TEST_CASE("program i depends only on the seed and i", "[generator]") {
  const GeneratorSpec spec = default_generator_spec();
  const auto key = [&](const GeneratorSpec& s, std::uint64_t i) { return content_key(generate_program(s, i).program); };
  CHECK(key(spec, 7) == key(spec, 7));
  CHECK(key(spec, 7) != key(spec, 8));
  GeneratorSpec other = spec;
  other.seed = 2;
  CHECK(key(other, 7) != key(spec, 7));
}

TEST_CASE("generated programs stay within the limits and cover every kind of block", "[generator]") {
  const GeneratorSpec spec = default_generator_spec();
  std::set<std::string> kinds, opcodes;
  for (std::uint64_t i = 0; i < 200; ++i) {
    const GeneratedProgram g = generate_program(spec, i);
    CHECK(g.flops <= spec.max_flops);
    REQUIRE(g.blocks.size() >= static_cast<std::size_t>(spec.min_blocks) + 1);
    REQUIRE(g.blocks.size() <= static_cast<std::size_t>(spec.max_blocks) + 1);
    kinds.insert(g.blocks.begin(), g.blocks.end());
    for (OpId id = 0; id < g.program.size(); ++id) {
      REQUIRE(g.program.op(id).shape.element_count() <= spec.max_elements);
      opcodes.insert(g.program.op(id).opcode);
    }
  }
  for (const auto& [kind, weight] : spec.block_weights) CHECK(kinds.count(kind) == 1);
  for (const char* opcode : {"dot", "convolution", "reduce", "reduce-window", "broadcast", "transpose", "exponential", "rsqrt"})
    CHECK(opcodes.count(opcode) == 1);
}

// Volumes only: every program starts from an NDHWC volume.
GeneratorSpec volume_spec(GeneratorSpec spec) {
  spec.image_share = 1;
  spec.volume_share = 1;
  spec.spatial = {{4, 1}, {8, 1}, {12, 1}};
  return spec;
}

TEST_CASE("a volume spec draws NDHWC programs whose image blocks act on all three spatial dimensions", "[generator]") {
  const GeneratorSpec spec = volume_spec(default_generator_spec());
  std::set<std::string> kinds;
  for (std::uint64_t i = 0; i < 100; ++i) {
    const GeneratedProgram g = generate_program(spec, i);
    REQUIRE(g.blocks.front() == "volume");
    kinds.insert(g.blocks.begin(), g.blocks.end());
    for (OpId id = 0; id < g.program.size(); ++id) {
      const Op& op = g.program.op(id);
      CAPTURE(i, op.name, op.opcode);
      if (op.opcode == "convolution") {
        REQUIRE(op.convolution);
        CHECK(op.convolution->input_spatial.size() == 3);
        CHECK(op.shape.dims.size() == 5);
      }
      if (op.opcode == "reduce-window") CHECK(op.shape.dims.size() == 5);
      if (op.opcode == "reduce" && op.shape.dims.size() == 2) CHECK(g.program.op(g.program.operands(id)[0]).shape.dims.size() == 5);
    }
  }
  for (const char* kind : {"conv", "residual", "pool", "batch_norm", "global_pool", "elementwise"}) CHECK(kinds.count(kind) == 1);
}

// Channels first only: every program starts from an NCHW image.
GeneratorSpec channels_first_spec(GeneratorSpec spec) {
  spec.image_share = 1;
  spec.channels_first_share = 1;
  return spec;
}

TEST_CASE("a channels-first spec draws NCHW programs: spatial dimensions innermost, channels second", "[generator]") {
  const GeneratorSpec spec = channels_first_spec(default_generator_spec());
  std::set<std::string> kinds;
  std::size_t convolutions = 0, pools = 0;
  for (std::uint64_t i = 0; i < 100; ++i) {
    const GeneratedProgram g = generate_program(spec, i);
    REQUIRE(g.blocks.front() == "image");
    kinds.insert(g.blocks.begin(), g.blocks.end());
    for (OpId id = 0; id < g.program.size(); ++id) {
      const Op& op = g.program.op(id);
      CAPTURE(i, op.name, op.opcode);
      if (op.opcode == "convolution") {
        ++convolutions;
        REQUIRE(op.convolution);
        CHECK(op.convolution->input_feature == 1);
        CHECK(op.convolution->output_feature == 1);
        CHECK(op.convolution->input_spatial == std::vector<std::int64_t>{2, 3});
        CHECK(op.convolution->output_spatial == std::vector<std::int64_t>{2, 3});
      }
      if (op.opcode == "reduce-window") {
        ++pools;
        REQUIRE(op.window);
        CHECK(op.window->size[0] == 1);
        CHECK(op.window->size[1] == 1);  // never across channels
        CHECK(op.window->size[3] > 1);
      }
    }
  }
  CHECK(convolutions > 0);
  CHECK(pools > 0);
  for (const char* kind : {"conv", "residual", "pool", "batch_norm", "global_pool", "elementwise"}) CHECK(kinds.count(kind) == 1);
}

// Network blocks only, on channels-first images half the time (the layout ONNX networks arrive in).
GeneratorSpec network_spec(GeneratorSpec spec) {
  spec.network_share = 1;
  spec.channels_first_share = 0.5;
  spec.image_share = 0.8;
  return spec;
}

TEST_CASE("a network spec draws grouped, dilated, joined, split, padded and gathered blocks", "[generator]") {
  const GeneratorSpec spec = network_spec(default_generator_spec());
  std::set<std::string> kinds, opcodes;
  bool depthwise = false, grouped = false, dilated = false;
  for (std::uint64_t i = 0; i < 200; ++i) {
    const GeneratedProgram g = generate_program(spec, i);
    kinds.insert(g.blocks.begin(), g.blocks.end());
    for (OpId id = 0; id < g.program.size(); ++id) {
      const Op& op = g.program.op(id);
      opcodes.insert(op.opcode);
      if (!op.convolution) continue;
      const std::int64_t groups = op.convolution->feature_group_count;
      const std::int64_t channels = g.program.op(g.program.operands(id)[0]).shape.dims[op.convolution->input_feature];
      depthwise |= groups > 1 && groups == channels;
      grouped |= groups > 1 && groups < channels;
      for (std::int64_t d : op.window->window_dilation) dilated |= d > 1;
    }
  }
  for (const auto& [kind, weight] : spec.network_block_weights) CHECK(kinds.count(kind) == 1);
  for (const char* opcode : {"slice", "concatenate", "pad", "gather", "constant"}) CHECK(opcodes.count(opcode) == 1);
  CHECK(depthwise);
  CHECK(grouped);
  CHECK(dilated);
}

TEST_CASE("a spec without volumes or network blocks draws exactly the programs it drew before they existed", "[generator]") {
  // The content keys of programs 0 and 1 of configs/generate/default.json, which the committed
  // corpus was measured on: a change to the draws would orphan its records.
  const GeneratorSpec spec = load_generator_spec(source_path("configs/generate/default.json"));
  CHECK(content_key(generate_program(spec, 0).program) == "4bee4a92ed5f7544");
  CHECK(content_key(generate_program(spec, 1).program) == "6bc6f9f4729dc0c0");
}

TEST_CASE("every bundled generator spec loads and draws programs within its limits", "[generator]") {
  std::size_t specs = 0;
  for (const auto& entry : std::filesystem::directory_iterator(source_path("configs/generate"))) {
    if (entry.path().extension() != ".json") continue;
    CAPTURE(entry.path().string());
    const GeneratorSpec spec = load_generator_spec(entry.path().string());
    ++specs;
    for (std::uint64_t i = 0; i < 20; ++i) {
      const GeneratedProgram g = generate_program(spec, i);
      CHECK(g.flops <= spec.max_flops);
      for (OpId id = 0; id < g.program.size(); ++id) REQUIRE(g.program.op(id).shape.element_count() <= spec.max_elements);
    }
  }
  CHECK(specs >= 2);  // the default corpus and the large-kernel one
}

// The first programs of `spec`, each under its heuristic schedule on the Halide backend.
void require_first_programs_check_on_halide(const GeneratorSpec& spec) {
  for (std::uint64_t i = 0; i < 6; ++i) {
    const GeneratedProgram g = generate_program(spec, i);
    const Kernel kernel(g.program.name(), g.program);
    const SearchSpace space = halide_schedule_space(kernel);
    const auto results = shared_halide_backend().measure(kernel, space, std::vector<Config>{heuristic_config(space, kernel)});
    CAPTURE(i, results[0].message);
    REQUIRE(results[0].ok());
  }
}

TEST_CASE("generated programs compile and agree with the reference on the Halide backend", "[generator][halide]") {
  require_first_programs_check_on_halide(small_spec());
}

TEST_CASE("generated volume programs compile and agree with the reference on the Halide backend", "[generator][halide]") {
  require_first_programs_check_on_halide(volume_spec(small_spec()));
}

TEST_CASE("generated channels-first programs compile and agree with the reference on the Halide backend", "[generator][halide]") {
  require_first_programs_check_on_halide(channels_first_spec(small_spec()));
}

TEST_CASE("generated network blocks compile and agree with the reference on the Halide backend", "[generator][halide]") {
  require_first_programs_check_on_halide(network_spec(small_spec()));
}

TEST_CASE("a generator spec with a wrong member names the file and the place", "[generator]") {
  const std::string dir = scratch_dir("generator_spec");
  const std::string path = dir + "/spec.json";
  std::ofstream(path) << R"({"output": "out", "block_weights": {"dense": 1, "lstm": 2}})";
  REQUIRE_THROWS_WITH(load_generator_spec(path), Catch::Contains(path) && Catch::Contains("block_weights.lstm"));
  std::ofstream(path) << R"({"output": "out", "count": 5, "blocks": {"min": 3, "max": 2}})";
  REQUIRE_THROWS_WITH(load_generator_spec(path), Catch::Contains("blocks.max"));
  std::ofstream(path) << R"({"output": "out", "volume_share": 1.5})";
  REQUIRE_THROWS_WITH(load_generator_spec(path), Catch::Contains("volume_share"));
  std::ofstream(path) << R"({"output": "out", "channels_first_share": 2})";
  REQUIRE_THROWS_WITH(load_generator_spec(path), Catch::Contains("channels_first_share"));
  std::ofstream(path) << R"({"output": "out", "count": 5, "seed": 9})";
  const GeneratorSpec spec = load_generator_spec(path);
  CHECK(spec.count == 5);
  CHECK(spec.seed == 9);
  CHECK(spec.output == dir + "/out");
}

// Issue 81: all block weights 0, or two of 1e308 (an infinite sum), silently drew transpose-only
// programs (the draw fell through to the last kind every time).
TEST_CASE("a generator spec whose weights sum to 0 or to infinity is refused by place", "[generator]") {
  const std::string path = scratch_dir("generator_spec_weights") + "/spec.json";
  std::ofstream(path) << R"({"output": "out", "block_weights": {"dense": 0, "residual": 0, "layer_norm": 0, "softmax": 0,
    "attention": 0, "transpose": 0, "conv": 0, "pool": 0, "batch_norm": 0, "global_pool": 0, "elementwise": 0}})";
  REQUIRE_THROWS_WITH(load_generator_spec(path), Catch::Contains("$.block_weights") && Catch::Contains("positive, finite sum"));
  std::ofstream(path) << R"({"output": "out", "block_weights": {"dense": 1e308, "residual": 1e308}})";
  REQUIRE_THROWS_WITH(load_generator_spec(path), Catch::Contains("$.block_weights") && Catch::Contains("positive, finite sum"));
  std::ofstream(path) << R"({"output": "out", "rows": [{"value": 8, "weight": 0}, {"value": 16, "weight": 0}]})";
  REQUIRE_THROWS_WITH(load_generator_spec(path), Catch::Contains("$.rows"));
}

// Issue 81: a count of 1e12 wrote 78,050 files before it was stopped; rows of 2^31 were never
// drawn and said nothing; limits no program fits failed naming neither the spec nor its members.
TEST_CASE("a generator spec asking for what no machine holds, or sizes it never draws, is refused by place", "[generator]") {
  const std::string path = scratch_dir("generator_spec_bounds") + "/spec.json";
  std::ofstream(path) << R"({"output": "out", "count": 1e12})";
  REQUIRE_THROWS_WITH(load_generator_spec(path), Catch::Contains(path) && Catch::Contains("$.count") && Catch::Contains("1000000"));
  std::ofstream(path) << R"({"output": "out", "rows": [{"value": 64, "weight": 1}, {"value": 2147483648, "weight": 1}]})";
  REQUIRE_THROWS_WITH(load_generator_spec(path), Catch::Contains("$.rows[1].value") && Catch::Contains("max_elements"));
  std::ofstream(path) << R"({"output": "out", "max_elements": 4, "max_flops": 1, "rows": [{"value": 2, "weight": 1}], "features": [{"value": 4, "weight": 1}],
                            "image_share": 0})";
  const GeneratorSpec tight = load_generator_spec(path);
  REQUIRE_THROWS_WITH(generate_program(tight, 0),
                      Catch::Contains(path) && Catch::Contains("$.max_elements and $.max_flops") && Catch::Contains("after 100 draws"));
}

TEST_CASE("a generator spec that extends another takes from it the members it leaves out", "[generator]") {
  const std::string dir = scratch_dir("generator_spec_extends");
  std::filesystem::create_directories(dir + "/sub");
  std::ofstream(dir + "/base.json") << R"({"output": "base_out", "seed": 7, "count": 40, "image_share": 0.25,
                                          "block_weights": {"conv": 5}, "rows": [{"value": 24, "weight": 1}]})";
  std::ofstream(dir + "/sub/child.json") << R"({"extends": "../base.json", "output": "child_out", "count": 3,
                                               "block_weights": {"dense": 0}})";
  const GeneratorSpec child = load_generator_spec(dir + "/sub/child.json");
  CHECK(child.seed == 7);
  CHECK(child.image_share == 0.25);
  CHECK(child.rows == std::vector<Weighted>{{24, 1.0}});
  CHECK(child.count == 3);  // its own
  CHECK(child.output == dir + "/sub/child_out");  // its own, against its own folder
  CHECK(child.block_weights.at("conv") == 5);  // the base's weight
  CHECK(child.block_weights.at("dense") == 0);  // its own
  CHECK(child.block_weights.at("pool") == default_generator_spec().block_weights.at("pool"));  // the base's fallback
  CHECK(child.channels == default_generator_spec().channels);

  // A cycle is an error naming the file and the place, not a stack overflow.
  std::ofstream(dir + "/base.json") << R"({"extends": "sub/child.json", "output": "base_out"})";
  REQUIRE_THROWS_WITH(load_generator_spec(dir + "/sub/child.json"), Catch::Contains("base.json") && Catch::Contains("extends"));
  std::ofstream(dir + "/self.json") << R"({"extends": "self.json", "output": "out"})";
  REQUIRE_THROWS_WITH(load_generator_spec(dir + "/self.json"), Catch::Contains("does not extend itself"));
  std::ofstream(dir + "/orphan.json") << R"({"extends": "none.json", "output": "out"})";
  REQUIRE_THROWS_WITH(load_generator_spec(dir + "/orphan.json"), Catch::Contains("none.json"));
}

TEST_CASE("the channels-first spec draws at the default spec's sizes the programs its corpus was measured on", "[generator]") {
  const GeneratorSpec nchw = load_generator_spec(source_path("configs/generate/nchw.json"));
  // As for the default spec: corpus/halide_nchw's records name these programs.
  CHECK(content_key(generate_program(nchw, 0).program) == "7ed10213d93a9327");
  CHECK(content_key(generate_program(nchw, 1).program) == "90b1e4e4abaca97d");
  const GeneratorSpec base = load_generator_spec(source_path("configs/generate/default.json"));
  CHECK(nchw.rows == base.rows);
  CHECK(nchw.features == base.features);
  CHECK(nchw.image_batch == base.image_batch);
  CHECK(nchw.spatial == base.spatial);
  CHECK(nchw.channels == base.channels);
  CHECK(nchw.channels_first_share == 1.0);
  CHECK(nchw.seed == 2);
}

}  // namespace
}  // namespace perftune
