#pragma once
// Hyper-parameters of the GNN (configs/models/*.json). Defaults are the TpuGraphs tile baseline
// (Phothilimthana et al., "TpuGraphs", NeurIPS 2023: GraphSAGE, 3 layers, width 64, opcode
// embedding 64) unless a comment says otherwise.
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ir/device_spec.h"
#include "ir/json_view.h"

namespace perftune {

// Bounds of the sizes a config or checkpoint may give, checked before anything is allocated.
inline constexpr int kMaxGnnWidth = 4096;         // opcode_embedding, hidden: 64x the baseline's 64
inline constexpr int kMaxGnnLayers = 256;         // layers, transformer_layers, head_layers
inline constexpr int kMaxOpcodeCapacity = 65536;  // XLA has ~120 opcodes; 512x that
// 2^26 weights (256 MiB of float32, 1 GiB with Adam's moments and the gradients): ~1000x the
// baseline's ~60k, beyond what one CPU trains in a session.
inline constexpr double kMaxGnnParameters = 67108864.0;

struct GnnParams {
  int opcode_embedding = 64;  // learned embedding width per opcode id
  int opcode_capacity = 256;  // embedding rows; XLA has ~120 opcodes, online learning may add ids up to this
  int min_opcode_count = 2;   // an opcode in fewer training kernels maps to "other" (rare -> shared bucket)
  int hidden = 64;            // width of the node MLP, every GraphSAGE layer and the head
  int layers = 3;             // GraphSAGE layers
  std::string aggregation = "mean";  // neighbours combined per direction: "mean" or "sum"
  std::string join = "late";  // config features: "late" (after pooling, one graph pass per kernel)
                              // or "early" (on every node before the GNN, one pass per config)
  std::vector<std::string> pooling = {"sum", "mean", "max"};  // column-wise reductions over nodes, concatenated
  int transformer_layers = 0;  // optional transformer encoder layers over nodes before pooling
  int transformer_heads = 4;   // attention heads (hidden must divide by it)
  int head_layers = 2;         // hidden layers of the MLP head to log runtime
  double leaky_slope = 0.01;   // leaky ReLU slope (PyTorch's default)
  // Hybrid: the analytical model's estimate of each config joins the config features and its
  // log seconds are added to the output, so the network learns a correction to the roofline
  // (surrogate/analytical/analytical_features.h); the head's last layer starts at zero, so an untrained
  // hybrid ranks exactly as the analytical model does. Needs analytical_device.
  bool analytical_feature = false;
  // The device the analytical estimates are for. Training fills it from the study config (the
  // kernels' device spec); checkpoints carry the whole spec, so a loaded model needs no file.
  std::optional<DeviceSpec> analytical_device;

  nlohmann::ordered_json to_json() const;
  // Absent keys keep their default; unknown keys, non-positive sizes and unknown names are
  // InputErrors naming the JSON path. "analytical_device" is a spec object (ir/device_spec.h).
  static GnnParams from_json(const JsonView& json);
  static GnnParams load(const std::string& path);
};

// An upper estimate of the weights a model of these hyper-parameters has (gnn_model.cpp's modules).
double estimated_parameter_count(const GnnParams& params);

}  // namespace perftune
