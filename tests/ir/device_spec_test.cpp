#include "ir/device_spec.h"

#include <fstream>

#include "ir/input_error.h"
#include "test_support.h"

namespace perftune {
namespace {

nlohmann::json valid_spec_json() {
  return nlohmann::json::parse(R"({
    "format": "perftune-device", "version": 1, "name": "toy", "kind": "tpu",
    "tile_knob_units": "layout_tiles", "cores": 2,
    "matrix_flops": {"bf16": 1e14, "f32": 1e14}, "vector_flops": {"f32": 1e12},
    "memory_bandwidth": 5e11, "onchip_bytes": 16777216, "onchip_is_scratchpad": true,
    "matrix_unit": [128, 128], "vector_tile": [8, 128],
    "launch_overhead": 5e-7, "tile_overhead": 3.5e-7,
    "sources": {"matrix_flops": "test"}})");
}

TEST_CASE("shipped TPU specs load with positive rates and their sources") {
  const std::string name = GENERATE(as<std::string>{}, "tpu_v2", "tpu_v3", "tpu_v4");
  CAPTURE(name);
  const DeviceSpec spec = load_device_spec(source_path("configs/hardware/" + name + ".json"));
  CHECK(spec.kind == "tpu");
  CHECK(spec.tile_knob_units == TileKnobUnits::kLayoutTiles);
  CHECK(spec.matrix_unit == std::array<std::int64_t, 2>{128, 128});
  CHECK(spec.vector_tile == std::array<std::int64_t, 2>{8, 128});
  CHECK(spec.matrix_rate(ElementType::kBF16) > 1e13);
  CHECK(spec.vector_rate(ElementType::kF32) > 1e11);
  CHECK(spec.memory_bandwidth > 1e11);
  for (const char* field : {"matrix_flops", "vector_flops", "memory_bandwidth", "onchip_bytes", "tile_overhead"})
    CHECK(spec.sources.contains(field));
}

TEST_CASE("newer TPU generations are faster per core") {
  const DeviceSpec v2 = load_device_spec(source_path("configs/hardware/tpu_v2.json"));
  const DeviceSpec v3 = load_device_spec(source_path("configs/hardware/tpu_v3.json"));
  const DeviceSpec v4 = load_device_spec(source_path("configs/hardware/tpu_v4.json"));
  CHECK(v2.matrix_rate(ElementType::kBF16) < v3.matrix_rate(ElementType::kBF16));
  CHECK(v3.matrix_rate(ElementType::kBF16) < v4.matrix_rate(ElementType::kBF16));
  CHECK(v2.memory_bandwidth < v3.memory_bandwidth);
  CHECK(v3.memory_bandwidth < v4.memory_bandwidth);
}

TEST_CASE("a spec round-trips through JSON and rates fall back to f32") {
  const nlohmann::json json = valid_spec_json();
  const DeviceSpec spec = device_spec_from_json(JsonView(json, "toy.json"));
  CHECK(spec.matrix_rate(ElementType::kBF16) == 1e14);
  CHECK(spec.vector_rate(ElementType::kBF16) == 1e12);  // not listed: f32's
  const nlohmann::json again = nlohmann::json::parse(device_spec_to_json(spec).dump());
  const DeviceSpec reread = device_spec_from_json(JsonView(again, "again.json"));
  CHECK(reread.memory_bandwidth == spec.memory_bandwidth);
  CHECK(reread.matrix_flops == spec.matrix_flops);
  CHECK(reread.onchip_bytes == spec.onchip_bytes);
  CHECK(reread.tile_knob_units == spec.tile_knob_units);

  const std::string path = scratch_dir("device_spec") + "/toy.json";
  save_device_spec(spec, path);
  CHECK(load_device_spec(path).tile_overhead == spec.tile_overhead);
}

TEST_CASE("a missing, negative, mistyped or unknown field is rejected with its name") {
  struct Row {
    const char* field;
    nlohmann::json value;  // null: remove the field
    const char* expected;  // part of the message
  };
  const Row row = GENERATE(values<Row>({
      {"memory_bandwidth", nullptr, "memory_bandwidth"},
      {"onchip_bytes", nullptr, "onchip_bytes"},
      {"sources", nullptr, "sources"},
      {"memory_bandwidth", -1.0, "$.memory_bandwidth"},
      {"tile_overhead", -1e-6, "$.tile_overhead"},
      {"onchip_bytes", -5, "$.onchip_bytes"},
      {"memory_bandwidth", 0.0, "positive"},
      {"memory_bandwidth", "fast", "$.memory_bandwidth"},
      {"matrix_unit", nlohmann::json::array({128}), "$.matrix_unit"},
      {"kind", "gpu", "$.kind"},
      {"tile_knob_units", "bytes", "$.tile_knob_units"},
      {"peak", 1.0, "$.peak"},
  }));
  CAPTURE(row.field, row.value.dump());
  nlohmann::json json = valid_spec_json();
  if (row.value.is_null()) json.erase(row.field);
  else json[row.field] = row.value;
  try {
    device_spec_from_json(JsonView(json, "bad.json"));
    FAIL("accepted a bad spec");
  } catch (const InputError& error) {
    const std::string message = error.what();
    CAPTURE(message);
    CHECK(message.find("bad.json") != std::string::npos);
    CHECK(message.find(row.expected) != std::string::npos);
  }
}

TEST_CASE("a negative rate inside the per-type table names its path") {
  nlohmann::json json = valid_spec_json();
  json["matrix_flops"]["bf16"] = -3.0;
  CHECK_THROWS_WITH(device_spec_from_json(JsonView(json, "bad.json")), Catch::Contains("$.matrix_flops.bf16"));
  json["matrix_flops"] = {{"f33", 1.0}};
  CHECK_THROWS_WITH(device_spec_from_json(JsonView(json, "bad.json")), Catch::Contains("$.matrix_flops.f33"));
}

TEST_CASE("a spec file that is not JSON names the file and line") {
  const std::string path = scratch_dir("device_spec_bad") + "/broken.json";
  std::ofstream(path) << "{\n  \"format\": \n";
  CHECK_THROWS_WITH(load_device_spec(path), Catch::Contains("broken.json") && Catch::Contains("line"));
}

}  // namespace
}  // namespace perftune
