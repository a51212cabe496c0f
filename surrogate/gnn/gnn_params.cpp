#include "surrogate/gnn/gnn_params.h"

#include <algorithm>
#include <climits>

#include "surrogate/json_fields.h"

namespace perftune {

nlohmann::ordered_json GnnParams::to_json() const {
  nlohmann::ordered_json json{{"opcode_embedding", opcode_embedding}, {"opcode_capacity", opcode_capacity},
                              {"min_opcode_count", min_opcode_count}, {"hidden", hidden},
                              {"layers", layers},                     {"aggregation", aggregation},
                              {"join", join},                         {"pooling", pooling},
                              {"transformer_layers", transformer_layers}, {"transformer_heads", transformer_heads},
                              {"head_layers", head_layers},           {"leaky_slope", leaky_slope},
                              {"analytical_feature", analytical_feature}};
  if (analytical_device) json["analytical_device"] = device_spec_to_json(*analytical_device);
  return json;
}

double estimated_parameter_count(const GnnParams& p) {
  const double h = p.hidden, embedding = p.opcode_embedding;
  // The modules of gnn_model.cpp, each rounded up: the embedding, the node input layer, three
  // h x h blocks per GraphSAGE layer, ~8 h^2 per transformer layer (attention and a 2h feed-forward)
  // and a head whose widest input is the pooled widths (at most 3 h plus the config features).
  return static_cast<double>(p.opcode_capacity) * embedding + (embedding + 64) * h + p.layers * 3 * h * h +
         p.transformer_layers * 8 * h * h + (p.head_layers + 1) * (4 * h + 64) * h;
}

GnnParams GnnParams::from_json(const JsonView& json) {
  json.expect_keys({"opcode_embedding", "opcode_capacity", "min_opcode_count", "hidden", "layers", "aggregation", "join",
                    "pooling", "transformer_layers", "transformer_heads", "head_layers", "leaky_slope", "analytical_feature",
                    "analytical_device", "comment"});
  GnnParams p;
  // Bounds against a typo or a hostile checkpoint, not tuned values: each is 64x the TpuGraphs
  // baseline or more (width 64, 3 layers), and kMaxGnnParameters bounds them together below.
  read_bounded_ints(json, {{"opcode_embedding", &p.opcode_embedding, kMaxGnnWidth}, {"opcode_capacity", &p.opcode_capacity, kMaxOpcodeCapacity},
                           {"min_opcode_count", &p.min_opcode_count, INT_MAX}, {"hidden", &p.hidden, kMaxGnnWidth},
                           {"layers", &p.layers, kMaxGnnLayers}, {"transformer_heads", &p.transformer_heads, kMaxGnnWidth},
                           {"head_layers", &p.head_layers, kMaxGnnLayers}});
  if (auto v = json.find("transformer_layers"))
    p.transformer_layers = read_bounded_count(*v, kMaxGnnLayers, "a count >= 0 of transformer layers");
  if (auto v = json.find("aggregation")) {
    p.aggregation = v->as_string();
    if (p.aggregation != "mean" && p.aggregation != "sum") v->fail("\"mean\" or \"sum\"");
  }
  if (auto v = json.find("join")) {
    p.join = v->as_string();
    if (p.join != "late" && p.join != "early") v->fail("\"late\" or \"early\"");
  }
  if (auto v = json.find("pooling")) {
    p.pooling = v->as_string_list();
    if (p.pooling.empty()) v->fail("a non-empty list of \"sum\", \"mean\", \"max\"");
    for (std::size_t i = 0; i < p.pooling.size(); ++i)
      if (p.pooling[i] != "sum" && p.pooling[i] != "mean" && p.pooling[i] != "max") v->at(i).fail("\"sum\", \"mean\" or \"max\"");
  }
  if (auto v = json.find("leaky_slope")) p.leaky_slope = v->as_non_negative_number();
  if (auto v = json.find("analytical_feature")) p.analytical_feature = v->as_bool();
  if (auto v = json.find("analytical_device")) p.analytical_device = device_spec_from_json(*v);
  if (p.transformer_layers > 0 && p.hidden % p.transformer_heads != 0)
    json.at("transformer_heads").fail("a divisor of hidden (" + std::to_string(p.hidden) + ")");
  if (const double count = estimated_parameter_count(p); count > kMaxGnnParameters)
    json.fail("hyper-parameters giving at most " + std::to_string(static_cast<long long>(kMaxGnnParameters)) +
              " weights, but these give about " + std::to_string(static_cast<long long>(count)) +
              " (opcode_capacity x opcode_embedding + layers and head_layers x hidden^2)");
  return p;
}

GnnParams GnnParams::load(const std::string& path) {
  const nlohmann::json json = parse_json_file(path);
  return from_json(JsonView(json, path));
}

}  // namespace perftune
