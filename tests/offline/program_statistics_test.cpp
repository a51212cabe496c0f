// The generator's distributions measured on real programs: what each op contributes, sources
// weighing the same, and the shipped spec carrying exactly what the real programs give.
#include "offline/program_statistics.h"

#include <catch2/catch.hpp>

#include "hardware/hardware_test_support.h"

namespace perftune {
namespace {

const std::string kPrograms = std::string(PERFTUNE_SOURCE_DIR) + "/configs/programs";

double weight_of(const std::vector<Weighted>& values, std::int64_t value) {
  for (const Weighted& w : values)
    if (w.value == value) return w.weight;
  return 0;
}

Program conv_program(std::int64_t window) {
  const std::string w = std::to_string(window);
  return program_from_text(R"({"name": "c", "ops": [
    {"name": "x", "opcode": "parameter", "shape": [3, 20, 20, 6], "parameter_number": 0},
    {"name": "k", "opcode": "parameter", "shape": [)" + w + ", " + w + R"(, 6, 10], "parameter_number": 1},
    {"name": "y", "opcode": "convolution", "shape": [3, )" + std::to_string(21 - window) + ", " + std::to_string(21 - window) + R"(, 10], "operands": ["x", "k"],
     "window": {"size": [)" + w + ", " + w + R"(]},
     "convolution": {"input_batch": 0, "input_feature": 3, "input_spatial": [1, 2], "kernel_input_feature": 2, "kernel_output_feature": 3,
                     "kernel_spatial": [0, 1], "output_batch": 0, "output_feature": 3, "output_spatial": [1, 2]}}]})");
}

TEST_CASE("a convolution gives its batch, spatial extents and channels; a weight gradient gives nothing", "[generator]") {
  const ProgramStatistics forward = program_statistics({{conv_program(3)}});
  CHECK(weight_of(forward.image_batch, 3) == Approx(1));
  CHECK(weight_of(forward.spatial, 20) == Approx(1));
  CHECK(weight_of(forward.channels, 6) == Approx(0.5));
  CHECK(weight_of(forward.channels, 10) == Approx(0.5));
  CHECK(forward.image_share == Approx(1));
  CHECK(forward.block_weights.at("conv") > forward.block_weights.at("dense"));
  const ProgramStatistics gradient = program_statistics({{conv_program(9)}});
  CHECK(gradient.channels.empty());
  CHECK(gradient.spatial.empty());
}

TEST_CASE("each source weighs the same, and every block of the grammar keeps a share", "[generator]") {
  const std::vector<Program> bundled = programs_of_source(kPrograms);
  REQUIRE(bundled.size() >= 10);
  const ProgramStatistics alone = program_statistics({bundled});
  // conv3x3_layer (56 x 56, 64 channels) and the MLPs' 32-row matrices are in there.
  CHECK(weight_of(alone.spatial, 56) > 0);
  CHECK(weight_of(alone.channels, 64) > 0);
  CHECK(weight_of(alone.rows, 32) > 0);
  double sum = 0;
  for (const Weighted& w : alone.channels) sum += w.weight;
  CHECK(sum == Approx(1).margin(0.01));
  for (const auto& [kind, weight] : default_generator_spec().block_weights) {
    CAPTURE(kind);
    CHECK(alone.block_weights.at(kind) > 0);
  }
  // Beside a source of one convolution, the bundled programs' many ops weigh only half.
  const ProgramStatistics both = program_statistics({bundled, {conv_program(3)}});
  CHECK(weight_of(both.image_batch, 3) == Approx(1));
  CHECK(statistics_json(both) == statistics_json(program_statistics({bundled, {conv_program(3)}})));
}

TEST_CASE("the shipped generator spec carries the statistics of the bundled programs and XLA's training step", "[generator][data]") {
  PERFTUNE_REQUIRE_DATA(module, "tpu/module_tuning_data_layout.pb");
  const auto derived = statistics_json(program_statistics({programs_of_source(kPrograms), programs_of_source(module)}));
  const nlohmann::json spec = parse_json_file(std::string(PERFTUNE_SOURCE_DIR) + "/configs/generate/default.json");
  for (const auto& [member, value] : derived.items()) {
    CAPTURE(member);
    // XLA's step is a 3-D network (volume_share 0.5 of the two sources); the default corpus was
    // drawn with 2-D images only, and volumes.json carries XLA's volumes.
    // Network blocks (grouped convolutions, joins, slices, pads, gathers) came later still:
    // networks.json carries the networks' mix.
    if (member == "volume_share" || member == "network_share" || member == "network_block_weights") CHECK_FALSE(spec.contains(member));
    else CHECK(nlohmann::json(value) == spec.at(member));
  }
  CHECK(derived.at("volume_share") == 0.5);
}

TEST_CASE("the volume generator spec carries the sizes of XLA's training step alone", "[generator][data]") {
  PERFTUNE_REQUIRE_DATA(module, "tpu/module_tuning_data_layout.pb");
  const auto derived = statistics_json(program_statistics({programs_of_source(module)}));
  const nlohmann::json spec = parse_json_file(std::string(PERFTUNE_SOURCE_DIR) + "/configs/generate/volumes.json");
  CHECK(derived.at("volume_share") == 1.0);  // every convolution of its 3-D network has three spatial dimensions
  // Its block mix is set by hand (the spec's description says why); it has no dots, so no rows
  // or features.
  for (const char* member : {"image_share", "volume_share", "image_batch", "spatial", "channels"}) {
    CAPTURE(member);
    CHECK(nlohmann::json(derived.at(member)) == spec.at(member));
  }
  CHECK(derived.at("rows").empty());
}

TEST_CASE("the networks generator spec carries the statistics of the training networks", "[generator]") {
  // The training side of the split of real networks (the held-out ones must not shape the corpus).
  std::vector<std::vector<Program>> sources;
  for (const char* name : {"resnet50", "mobilenet_v3_small", "densenet121", "googlenet", "shufflenet_v2_x1_0", "vit_b_16", "gpt_block"})
    sources.push_back(programs_of_source(kPrograms + "/networks/" + name + ".json"));
  const auto derived = statistics_json(program_statistics(sources));
  const nlohmann::json spec = parse_json_file(std::string(PERFTUNE_SOURCE_DIR) + "/configs/generate/networks.json");
  for (const auto& [member, value] : derived.items()) {
    CAPTURE(member);
    if (member == "volume_share") CHECK(value == 0.0);  // no 3-D network among them
    else CHECK(nlohmann::json(value) == spec.at(member));
  }
  // Depthwise convolutions (MobileNet), joins (DenseNet, GoogLeNet), channel splits (ShuffleNet)
  // and the class-token gathers (ViT) are all there.
  for (const char* kind : {"grouped_conv", "concat", "channel_split", "embedding"}) {
    CAPTURE(kind);
    CHECK(derived.at("network_block_weights").at(kind).get<double>() > 0.05);
  }
}

}  // namespace
}  // namespace perftune
