#include "ir/device_spec.h"

#include <algorithm>
#include <filesystem>
#include <stdexcept>

#include "ir/file_io.h"

namespace perftune {

namespace {

double positive_number(const JsonView& view) {
  const double value = view.as_number();
  if (value <= 0) view.fail("a positive number, found " + std::to_string(value));
  return value;
}

std::map<ElementType, double> rate_table(const JsonView& view) {
  std::map<ElementType, double> rates;
  if (!view.is_object()) view.fail("an object mapping element types (\"f32\", \"bf16\", ...) to FLOP/s");
  for (const auto& item : view.value().items()) {
    const JsonView entry = view.at(item.key());
    const auto type = parse_element_type(item.key());
    if (!type) entry.fail("an element type name such as \"f32\" or \"bf16\" as the key");
    rates[*type] = positive_number(entry);
  }
  if (rates.empty()) view.fail("at least one element type");
  return rates;
}

std::array<std::int64_t, 2> pair_of_positive(const JsonView& view) {
  if (view.size() != 2) view.fail("an array of two positive integers");
  return {view.at(std::size_t{0}).as_positive_int(), view.at(std::size_t{1}).as_positive_int()};
}

double lookup(const std::map<ElementType, double>& rates, ElementType type) {
  if (auto it = rates.find(type); it != rates.end()) return it->second;
  if (auto it = rates.find(ElementType::kF32); it != rates.end()) return it->second;
  double best = 0.0;
  for (const auto& [key, rate] : rates) best = std::max(best, rate);
  return best;
}

nlohmann::ordered_json rates_to_json(const std::map<ElementType, double>& rates) {
  nlohmann::ordered_json json = nlohmann::ordered_json::object();
  for (const auto& [type, rate] : rates) json[std::string(element_type_name(type))] = rate;
  return json;
}

}  // namespace

double DeviceSpec::matrix_rate(ElementType type) const { return lookup(matrix_flops, type); }
double DeviceSpec::vector_rate(ElementType type) const { return lookup(vector_flops, type); }

std::string tile_knob_units_name(TileKnobUnits units) {
  return units == TileKnobUnits::kElements ? "elements" : "layout_tiles";
}

DeviceSpec device_spec_from_json(const JsonView& json) {
  json.expect_keys({"format", "version", "name", "kind", "tile_knob_units", "cores", "matrix_flops",
                    "vector_flops", "memory_bandwidth", "onchip_bytes", "onchip_is_scratchpad",
                    "matrix_unit", "vector_tile", "launch_overhead", "tile_overhead", "sources",
                    "measured", "description"});
  if (json.at("format").as_string() != "perftune-device") json.at("format").fail("\"perftune-device\"");
  if (json.at("version").as_int() != kDeviceSpecVersion)
    json.at("version").fail("version " + std::to_string(kDeviceSpecVersion));
  DeviceSpec spec;
  spec.name = json.at("name").as_string();
  spec.kind = json.at("kind").as_string();
  if (spec.kind != "tpu" && spec.kind != "cpu") json.at("kind").fail("\"tpu\" or \"cpu\"");
  const std::string units = json.at("tile_knob_units").as_string();
  if (units == "elements") spec.tile_knob_units = TileKnobUnits::kElements;
  else if (units == "layout_tiles") spec.tile_knob_units = TileKnobUnits::kLayoutTiles;
  else json.at("tile_knob_units").fail("\"elements\" or \"layout_tiles\"");
  spec.cores = static_cast<int>(json.at("cores").as_positive_int());
  spec.matrix_flops = rate_table(json.at("matrix_flops"));
  spec.vector_flops = rate_table(json.at("vector_flops"));
  spec.memory_bandwidth = positive_number(json.at("memory_bandwidth"));
  spec.onchip_bytes = json.at("onchip_bytes").as_positive_int();
  spec.onchip_is_scratchpad = json.at("onchip_is_scratchpad").as_bool();
  spec.matrix_unit = pair_of_positive(json.at("matrix_unit"));
  spec.vector_tile = pair_of_positive(json.at("vector_tile"));
  // Overheads may be zero (a device with none), never negative.
  spec.launch_overhead = json.at("launch_overhead").as_non_negative_number();
  spec.tile_overhead = json.at("tile_overhead").as_non_negative_number();
  const JsonView sources = json.at("sources");
  if (!sources.is_object()) sources.fail("an object naming the source of each number");
  spec.sources = sources.value();
  if (auto measured = json.find("measured")) {
    if (!measured->is_object()) measured->fail("an object");
    spec.measured = measured->value();
  }
  return spec;
}

DeviceSpec load_device_spec(const std::string& path) {
  const nlohmann::json json = parse_json_file(path);
  return device_spec_from_json(JsonView(json, path));
}

nlohmann::ordered_json device_spec_to_json(const DeviceSpec& spec) {
  nlohmann::ordered_json json;
  json["format"] = "perftune-device";
  json["version"] = kDeviceSpecVersion;
  json["name"] = spec.name;
  json["kind"] = spec.kind;
  json["tile_knob_units"] = tile_knob_units_name(spec.tile_knob_units);
  json["cores"] = spec.cores;
  json["matrix_flops"] = rates_to_json(spec.matrix_flops);
  json["vector_flops"] = rates_to_json(spec.vector_flops);
  json["memory_bandwidth"] = spec.memory_bandwidth;
  json["onchip_bytes"] = spec.onchip_bytes;
  json["onchip_is_scratchpad"] = spec.onchip_is_scratchpad;
  json["matrix_unit"] = spec.matrix_unit;
  json["vector_tile"] = spec.vector_tile;
  json["launch_overhead"] = spec.launch_overhead;
  json["tile_overhead"] = spec.tile_overhead;
  json["sources"] = spec.sources;
  if (!spec.measured.empty()) json["measured"] = spec.measured;
  return json;
}

void save_device_spec(const DeviceSpec& spec, const std::string& path) {
  const std::filesystem::path target(path);
  std::error_code error;
  if (target.has_parent_path()) std::filesystem::create_directories(target.parent_path(), error);
  if (error) throw std::runtime_error(path + ": cannot create its folder (" + error.message() + ")");
  // Written beside the target and renamed, so a failed write never leaves a half-written spec in
  // place of a good one.
  write_file_atomically(path, device_spec_to_json(spec).dump(2) + "\n");
}

}  // namespace perftune
