#include "surrogate/gnn/gnn_model.h"

#include "surrogate/features/config_features.h"

namespace perftune {

namespace F = torch::nn::functional;

GraphTensors make_graph_tensors(const KernelGraphFeatures& features, const std::string& aggregation) {
  GraphTensors graph;
  const auto n = static_cast<std::int64_t>(features.node_count);
  graph.nodes = n;
  graph.opcodes = torch::tensor(features.opcode_ids, torch::kInt64);
  graph.node_features = torch::from_blob(const_cast<float*>(features.node_features.data()),
                                         {n, static_cast<std::int64_t>(kNodeFeatureWidth)}, torch::kFloat32)
                            .clone();
  graph.producer = torch::tensor(features.edge_producer, torch::kInt64);
  graph.consumer = torch::tensor(features.edge_consumer, torch::kInt64);
  std::vector<float> operands(n, 0.0f), users(n, 0.0f);
  for (std::size_t e = 0; e < features.edge_producer.size(); ++e) {
    users[features.edge_producer[e]] += 1.0f;
    operands[features.edge_consumer[e]] += 1.0f;
  }
  for (std::int64_t i = 0; i < n; ++i) {
    operands[i] = aggregation == "mean" ? 1.0f / std::max(1.0f, operands[i]) : 1.0f;
    users[i] = aggregation == "mean" ? 1.0f / std::max(1.0f, users[i]) : 1.0f;
  }
  graph.in_scale = torch::tensor(operands).view({n, 1, 1});
  graph.out_scale = torch::tensor(users).view({n, 1, 1});
  return graph;
}

torch::Tensor analytical_log_seconds(const torch::Tensor& config_rows) {
  return config_rows.select(1, static_cast<std::int64_t>(kAnalyticalFeatureOffset + kAnalyticalLogSeconds));
}

GnnModelImpl::GnnModelImpl(const GnnParams& params) : params_(params) {
  const std::int64_t h = params.hidden;
  opcode_embedding = register_module("opcode_embedding", torch::nn::Embedding(params.opcode_capacity, params.opcode_embedding));
  node_input = register_module("node_input",
                               torch::nn::Linear(params.opcode_embedding + static_cast<std::int64_t>(kNodeFeatureWidth), h));
  if (!late_join())
    node_config = register_module(
        "node_config", torch::nn::Linear(torch::nn::LinearOptions(static_cast<std::int64_t>(kConfigFeatureWidth) + 1, h).bias(false)));
  sage = register_module("sage", torch::nn::ModuleList());
  for (int l = 0; l < params.layers; ++l) sage->push_back(torch::nn::Linear(3 * h, h));
  if (params.transformer_layers > 0)
    transformer = register_module(
        "transformer", torch::nn::TransformerEncoder(torch::nn::TransformerEncoderOptions(
                           torch::nn::TransformerEncoderLayerOptions(h, params.transformer_heads).dim_feedforward(2 * h).dropout(0.0),
                           params.transformer_layers)));
  head = register_module("head", torch::nn::Sequential());
  std::int64_t width = pooled_width() + (late_join() ? static_cast<std::int64_t>(kConfigFeatureWidth) : 0);
  for (int l = 0; l < params.head_layers; ++l) {
    head->push_back(torch::nn::Linear(width, h));
    head->push_back(torch::nn::LeakyReLU(torch::nn::LeakyReLUOptions().negative_slope(params.leaky_slope)));
    width = h;
  }
  auto last = torch::nn::Linear(width, 1);
  head->push_back(last);
  if (params.analytical_feature) {
    // The correction starts at zero, so training starts from the analytical model's ranking.
    torch::NoGradGuard no_grad;
    last->weight.zero_();
    last->bias.zero_();
    analytical_scale = register_parameter("analytical_scale", torch::ones({1}));
  }
  output_offset = register_buffer("output_offset", torch::zeros({1}));
  calibration = register_buffer("calibration", torch::tensor({1.0f, 0.0f}));
  node_mean = register_buffer("node_mean", torch::zeros({static_cast<std::int64_t>(kNodeFeatureWidth)}));
  node_scale = register_buffer("node_scale", torch::ones({static_cast<std::int64_t>(kNodeFeatureWidth)}));
  config_mean = register_buffer("config_mean", torch::zeros({static_cast<std::int64_t>(kConfigFeatureWidth)}));
  config_scale = register_buffer("config_scale", torch::ones({static_cast<std::int64_t>(kConfigFeatureWidth)}));
}

void GnnModelImpl::set_input_statistics(const torch::Tensor& node_rows, const torch::Tensor& config_rows) {
  torch::NoGradGuard no_grad;
  // A column that never varies in training (an absent knob, an unused one-hot) keeps scale 1.
  auto scale = [](const torch::Tensor& rows) {
    auto std = rows.size(0) > 1 ? rows.std(0) : torch::zeros({rows.size(1)});
    return torch::where(std > 1e-6, 1.0 / std, torch::ones_like(std));
  };
  node_mean.copy_(node_rows.mean(0));
  node_scale.copy_(scale(node_rows));
  config_mean.copy_(config_rows.mean(0));
  config_scale.copy_(scale(config_rows));
}

std::int64_t GnnModelImpl::pooled_width() const {
  return static_cast<std::int64_t>(params_.pooling.size()) * params_.hidden;
}

torch::Tensor GnnModelImpl::activate(const torch::Tensor& x) const {
  return F::leaky_relu(x, F::LeakyReLUFuncOptions().negative_slope(params_.leaky_slope));
}

torch::Tensor GnnModelImpl::propagate(const GraphTensors& graph, torch::Tensor h) {
  const bool has_edges = graph.producer.numel() > 0;
  for (const auto& module : *sage) {
    auto from_operands = torch::zeros_like(h);
    auto from_users = torch::zeros_like(h);
    if (has_edges) {
      from_operands = from_operands.index_add(0, graph.consumer, h.index_select(0, graph.producer)) * graph.in_scale;
      from_users = from_users.index_add(0, graph.producer, h.index_select(0, graph.consumer)) * graph.out_scale;
    }
    auto combined = torch::cat({h, from_operands, from_users}, -1);
    h = activate(module->as<torch::nn::Linear>()->forward(combined));
    h = F::normalize(h, F::NormalizeFuncOptions().p(2).dim(-1));
  }
  if (!transformer.is_empty()) h = transformer->forward(h);
  return h;
}

torch::Tensor GnnModelImpl::pool(const torch::Tensor& h) {
  std::vector<torch::Tensor> parts;
  for (const std::string& kind : params_.pooling) {
    if (kind == "sum") parts.push_back(h.sum(0));
    else if (kind == "mean") parts.push_back(h.mean(0));
    else parts.push_back(std::get<0>(h.max(0)));
  }
  return torch::cat(parts, -1);
}

torch::Tensor GnnModelImpl::calibrate(const torch::Tensor& raw) const { return raw * calibration[0] + calibration[1]; }

torch::Tensor GnnModelImpl::residual(const torch::Tensor& raw, const torch::Tensor& configs) const {
  if (!analytical_scale.defined()) return raw;
  return raw + analytical_scale * analytical_log_seconds(configs);
}

torch::Tensor GnnModelImpl::embed_graph(const GraphTensors& graph) {
  auto x = torch::cat({opcode_embedding->forward(graph.opcodes), (graph.node_features - node_mean) * node_scale}, -1);
  auto h = activate(node_input->forward(x)).unsqueeze(1);  // [N, 1, H]
  return pool(propagate(graph, h)).squeeze(0);
}

torch::Tensor GnnModelImpl::predict_late(const torch::Tensor& embedding, const torch::Tensor& configs) {
  const auto batch = configs.size(0);
  auto joined = torch::cat({embedding.unsqueeze(0).expand({batch, embedding.size(0)}), (configs - config_mean) * config_scale}, -1);
  return calibrate(residual(head->forward(joined).squeeze(-1) + output_offset, configs));
}

torch::Tensor GnnModelImpl::predict_early(const GraphTensors& graph, const torch::Tensor& configs,
                                          const torch::Tensor& node_fused) {
  const auto batch = configs.size(0);
  auto x = torch::cat({opcode_embedding->forward(graph.opcodes), (graph.node_features - node_mean) * node_scale}, -1);
  auto node_part = node_input->forward(x).unsqueeze(1);  // [N, 1, H]
  // The config's contribution is the same on every node except the fused flag, so it is computed
  // once per config and broadcast: node_config([c, f]) = W_c c + w_f f.
  auto weight = node_config->weight;  // [H, C + 1]
  auto config_part = torch::matmul((configs - config_mean) * config_scale, weight.narrow(1, 0, configs.size(1)).t()).unsqueeze(0);  // [1, B, H]
  auto h = node_part + config_part;
  if (node_fused.defined())
    h = h + node_fused.t().unsqueeze(-1) * weight.narrow(1, configs.size(1), 1).squeeze(1);  // [N, B, H]
  else
    h = h.expand({graph.nodes, batch, params_.hidden});
  h = activate(h);
  return calibrate(residual(head->forward(pool(propagate(graph, h))).squeeze(-1) + output_offset, configs));
}

torch::Tensor GnnModelImpl::forward(const GraphTensors& graph, const torch::Tensor& configs, const torch::Tensor& node_fused) {
  if (late_join()) return predict_late(embed_graph(graph), configs);
  return predict_early(graph, configs, node_fused);
}

}  // namespace perftune
