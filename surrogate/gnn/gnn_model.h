#pragma once
// The learned performance model's network (libtorch). Internal to surrogate/: other layers use
// CostModel through learned_model.h, so they never compile <torch/torch.h>.
//
// opcode embedding + node features -> node MLP -> GraphSAGE layers (mean or sum of operands and of
// users, concatenated with self, dense, leaky ReLU, L2-normalize) -> optional transformer over
// nodes -> column-wise sum/mean/max over nodes -> MLP head -> log seconds.
// Late join: config features join after pooling (one graph pass per kernel, reused for every
// config). Early join: config features join every node before the GNN (one pass per config,
// batched as [nodes, configs, width] so neighbour sums are one gather/scatter for all configs).
#include <torch/torch.h>

#include "surrogate/features/kernel_features.h"
#include "surrogate/gnn/gnn_params.h"

namespace perftune {

// A kernel graph as tensors.
struct GraphTensors {
  torch::Tensor opcodes;        // [N] int64
  torch::Tensor node_features;  // [N, kNodeFeatureWidth]
  torch::Tensor producer, consumer;  // [E] int64: edge endpoints
  torch::Tensor in_scale, out_scale;  // [N, 1, 1]: 1/operand count and 1/user count (mean) or 1 (sum)
  std::int64_t nodes = 0;
};
GraphTensors make_graph_tensors(const KernelGraphFeatures& features, const std::string& aggregation);

// The hybrid block's analytical log seconds (analytical_features.h, column kAnalyticalLogSeconds)
// of config feature rows [B, kConfigFeatureWidth], as a [B] view: the one place that knows where
// the hybrid's prior sits in a config row (the residual, the shrink, the output offset, the
// trainer's pooled choice all read it here).
torch::Tensor analytical_log_seconds(const torch::Tensor& config_rows);

struct GnnModelImpl : torch::nn::Module {
  explicit GnnModelImpl(const GnnParams& params);

  // Late join: the kernel's pooled embedding [pooled_width()], computed once per kernel.
  torch::Tensor embed_graph(const GraphTensors& graph);
  // Late join: log seconds [B] for config features [B, kConfigFeatureWidth].
  torch::Tensor predict_late(const torch::Tensor& embedding, const torch::Tensor& configs);
  // Early join: log seconds [B]; `node_fused` is [B, N] (per-node fused flags) or undefined.
  torch::Tensor predict_early(const GraphTensors& graph, const torch::Tensor& configs, const torch::Tensor& node_fused);
  // Either join, as configured.
  torch::Tensor forward(const GraphTensors& graph, const torch::Tensor& configs, const torch::Tensor& node_fused);

  bool late_join() const { return params_.join == "late"; }
  std::int64_t pooled_width() const;

  GnnParams params_;
  torch::nn::Embedding opcode_embedding{nullptr};
  torch::nn::Linear node_input{nullptr};   // [embedding, node features] -> hidden
  torch::nn::Linear node_config{nullptr};  // early join only: [config, fused flag] -> hidden, added per config
  torch::nn::ModuleList sage;              // Linear(3 * hidden -> hidden) each
  torch::nn::TransformerEncoder transformer{nullptr};
  torch::nn::Sequential head;
  torch::Tensor output_offset;  // buffer: mean log seconds of the training data, added to the head
  // Hybrid only (GnnParams::analytical_feature): weight of the analytical log seconds added to the
  // output (starts at 1: the roofline as is, the head's correction on top); undefined otherwise.
  torch::Tensor analytical_scale;
  // Buffer [scale, shift] applied last: ranking losses stretch the output freely, so after training
  // a least-squares fit on the training data maps it back to log seconds (order-preserving, scale > 0).
  torch::Tensor calibration;
  // Buffers: inputs are standardized with the training data's mean and 1/std per column, so log
  // sizes, one-hots and ratios train at one pace (identity until set_input_statistics).
  torch::Tensor node_mean, node_scale, config_mean, config_scale;

  // Sets the standardization from sample rows [rows, kNodeFeatureWidth] and [rows, kConfigFeatureWidth].
  void set_input_statistics(const torch::Tensor& node_rows, const torch::Tensor& config_rows);

 private:
  // [N, B, H] -> [N, B, H] through the GraphSAGE layers (and transformer).
  torch::Tensor propagate(const GraphTensors& graph, torch::Tensor h);
  torch::Tensor pool(const torch::Tensor& h);  // [N, B, H] -> [B, pooled]
  torch::Tensor activate(const torch::Tensor& x) const;
  torch::Tensor calibrate(const torch::Tensor& raw) const;
  // raw + analytical_scale * the configs' analytical log seconds (hybrid), else raw.
  torch::Tensor residual(const torch::Tensor& raw, const torch::Tensor& configs) const;
};
TORCH_MODULE(GnnModel);

}  // namespace perftune
