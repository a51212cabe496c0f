#pragma once
// What an analytical cost model needs to know about a device, read from configs/hardware/*.json.
// Both hardware/ (calibrate writes the host's spec) and surrogate/ (the analytical model reads it)
// use it, so it lives in ir/ as plain data. Every rate is for ONE core (TPU TensorCore, CPU core):
// a kernel's tile loop runs on one core.
//
//   {"format": "perftune-device", "version": 1, "name": "tpu-v3", "kind": "tpu",
//    "tile_knob_units": "layout_tiles", "cores": 2,
//    "matrix_flops": {"bf16": 6.15e13, "f32": 6.15e13}, "vector_flops": {"f32": 9.6e11},
//    "memory_bandwidth": 4.5e11, "onchip_bytes": 16777216, "onchip_is_scratchpad": true,
//    "matrix_unit": [128, 128], "vector_tile": [8, 128],
//    "launch_overhead": 5e-7, "tile_overhead": 3.5e-7,
//    "sources": {"matrix_flops": "...", ...}, "measured": {...optional, free form...}}
#include <array>
#include <cstdint>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "ir/element_type.h"
#include "ir/json_view.h"

namespace perftune {

inline constexpr int kDeviceSpecVersion = 1;

// How a device's tile.out.<d> knob values are to be read (see ir/knob_roles.h).
enum class TileKnobUnits {
  // Extent in elements along logical output dimension d (the CPU backend's loop nests).
  kElements,
  // XLA TPU output_bounds: knob d is the d-th PHYSICAL dimension (major to minor, i.e.
  // reversed minor_to_major) of the kernel's iteration shape, counted in layout tiles: the
  // minor-most dimension in units of vector_tile[1] (128 lanes), the second minor-most in units
  // of vector_tile[0] (8 sublanes), every other dimension in elements; a rank-1 shape in units of
  // one full vreg (8 x 128 = 1024 elements). Established from op_tuning_data.pb, see
  // surrogate/analytical/analytical_model.h.
  kLayoutTiles,
};

struct DeviceSpec {
  std::string name;  // "tpu-v3", "host"
  std::string kind;  // "tpu" or "cpu"
  TileKnobUnits tile_knob_units = TileKnobUnits::kElements;
  int cores = 1;  // per chip / host; informational, rates below are per core
  // Peak FLOP/s of the matrix unit (dot, convolution) per element type, one core.
  std::map<ElementType, double> matrix_flops;
  // Peak element operations per second of the vector unit per element type, one core.
  std::map<ElementType, double> vector_flops;
  double memory_bandwidth = 0.0;   // bytes/s between off-chip memory and one core
  std::int64_t onchip_bytes = 0;   // VMEM (TPU) or the per-core L2 cache (CPU)
  // True for a software-managed scratchpad (TPU VMEM): a tile whose working set exceeds it does
  // not compile. False for a cache: the tile runs but loses its on-chip reuse.
  bool onchip_is_scratchpad = true;
  std::array<std::int64_t, 2> matrix_unit{1, 1};  // (contraction, output features) of one pass
  // One vector register for 32-bit elements: (sublanes, lanes). TPU (8, 128); a CPU (1, lanes).
  // Narrower types pack more sublanes (bf16 on TPU: 16 x 128), as XLA's (8,128)(2,1) tiling does.
  std::array<std::int64_t, 2> vector_tile{1, 1};
  double launch_overhead = 0.0;  // seconds per kernel launch
  double tile_overhead = 0.0;    // seconds per tile iteration (loop / pipeline step)
  nlohmann::json sources = nlohmann::json::object();   // where each number comes from
  nlohmann::json measured = nlohmann::json::object();  // raw calibration results, if any

  // Rate for `type`, falling back to f32's, then to the largest listed; never 0 for a loaded spec.
  double matrix_rate(ElementType type) const;
  double vector_rate(ElementType type) const;
};

// Reads and validates a spec. A missing, mistyped, unknown or non-positive field throws
// InputError naming the file and its JSON path ("host.json: $.memory_bandwidth: ...").
DeviceSpec load_device_spec(const std::string& path);
DeviceSpec device_spec_from_json(const JsonView& json);
nlohmann::ordered_json device_spec_to_json(const DeviceSpec& spec);
// Writes the spec as indented JSON (creating the parent folder); throws std::runtime_error on failure.
void save_device_spec(const DeviceSpec& spec, const std::string& path);

std::string tile_knob_units_name(TileKnobUnits units);  // "elements" / "layout_tiles"

}  // namespace perftune
