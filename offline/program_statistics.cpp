#include "offline/program_statistics.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <numeric>
#include <set>

#include "ir/corpus.h"
#include "ir/fusion.h"
#include "ir/input_error.h"
#include "ir/source.h"

namespace perftune {

namespace {

// Occurrences of values and categories within one source.
struct Counts {
  std::map<std::int64_t, double> rows, features, image_batch, spatial, channels;
  std::map<std::string, double> ops;      // category -> count
  std::map<std::string, double> network;  // network block category -> count (program_generator.h)
  double volume_convs = 0;            // convolutions with three spatial dimensions
};

std::int64_t product_except(const std::vector<std::int64_t>& dims, const std::vector<std::int64_t>& except) {
  std::int64_t p = 1;
  for (std::size_t d = 0; d < dims.size(); ++d)
    if (std::find(except.begin(), except.end(), static_cast<std::int64_t>(d)) == except.end()) p *= dims[d];
  return p;
}

std::int64_t product_of(const std::vector<std::int64_t>& dims, const std::vector<std::int64_t>& which) {
  std::int64_t p = 1;
  for (std::int64_t d : which) p *= dims[static_cast<std::size_t>(d)];
  return p;
}

std::vector<std::int64_t> joined(std::vector<std::int64_t> a, const std::vector<std::int64_t>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

bool computed(const Op& op) { return !op.is_parameter() && op.opcode != "constant" && op.opcode != "broadcast"; }

void count_op(const Program& program, OpId id, Counts& counts) {
  const Op& op = program.op(id);
  const auto operands = program.operands(id);
  const std::size_t rank = op.shape.dims.size();
  if (op.opcode == "convolution" && op.convolution && operands.size() == 2) {
    const ConvolutionDims& c = *op.convolution;
    const auto& lhs = program.op(operands[0]).shape.dims;
    const auto& kernel = program.op(operands[1]).shape.dims;
    const bool weight_gradient = std::any_of(c.kernel_spatial.begin(), c.kernel_spatial.end(),
                                             [&](std::int64_t d) { return kernel[static_cast<std::size_t>(d)] > 7; });
    if (weight_gradient) return;
    if (c.feature_group_count > 1) counts.network["grouped_conv"] += 1;
    else counts.ops["conv"] += 1;
    if (c.input_spatial.size() == 3) counts.volume_convs += 1;
    counts.image_batch[lhs[static_cast<std::size_t>(c.input_batch)]] += 1;
    for (std::int64_t d : c.input_spatial) counts.spatial[lhs[static_cast<std::size_t>(d)]] += 1;
    counts.channels[lhs[static_cast<std::size_t>(c.input_feature)]] += 1;
    counts.channels[op.shape.dims[static_cast<std::size_t>(c.output_feature)]] += 1;
  } else if (op.opcode == "dot" && op.dot && operands.size() == 2) {
    const DotDims& d = *op.dot;
    const auto& lhs = program.op(operands[0]).shape.dims;
    const auto& rhs = program.op(operands[1]).shape.dims;
    counts.rows[product_except(lhs, joined(d.lhs_contracting, d.lhs_batch))] += 1;
    counts.features[product_except(rhs, joined(d.rhs_contracting, d.rhs_batch))] += 1;
    counts.features[product_of(lhs, d.lhs_contracting)] += 1;
    const bool of_weights = program.op(operands[0]).is_parameter() || program.op(operands[1]).is_parameter();
    if (of_weights && d.lhs_batch.empty()) counts.ops["dense"] += 1;
    else counts.ops["attention"] += 0.5;  // two dots of activations per attention block
  } else if (op.opcode == "reduce-window") {
    counts.ops["pool"] += 1;
  } else if (op.opcode == "reduce" && !operands.empty()) {
    const std::size_t in_rank = program.op(operands[0]).shape.dims.size();
    bool maximum = false;
    if (!op.called.empty())
      for (OpId o = 0; o < op.called.front()->size(); ++o) maximum = maximum || op.called.front()->op(o).opcode == "maximum";
    // An image may be a volume (a fifth dimension), as in XLA's 3-D network.
    if (in_rank >= 4 && rank == 1) counts.ops["batch_norm"] += 0.5;
    else if (in_rank >= 4 && rank == 2) counts.ops["global_pool"] += 1;
    else if (in_rank == 2 && maximum) counts.ops["softmax"] += 1;
    else if (in_rank == 2) counts.ops["layer_norm"] += 0.5;
  } else if (op.opcode == "transpose") {
    counts.ops["transpose"] += 1;
  } else if (op.opcode == "concatenate" || op.opcode == "slice" || op.opcode == "pad" || op.opcode == "gather") {
    counts.network[op.opcode] += 1;
  } else if (is_elementwise_opcode(op.opcode) && rank > 0) {
    const bool residual = op.opcode == "add" && operands.size() == 2 && computed(program.op(operands[0])) &&
                          computed(program.op(operands[1])) && program.op(operands[0]).shape.dims == op.shape.dims &&
                          program.op(operands[1]).shape.dims == op.shape.dims;
    counts.ops[residual ? "residual" : "elementwise_ops"] += 1;
  }
}

void count_program(const Program& program, Counts& counts, std::set<const Program*>& seen) {
  for (OpId id = 0; id < program.size(); ++id) {
    count_op(program, id, counts);
    for (const auto& called : program.op(id).called) {
      // A reducer body (scalar ops) is not part of the model; a fusion body is.
      const bool scalar = called->size() > 0 && called->op(called->root()).shape.dims.empty();
      if (!scalar && seen.insert(called.get()).second) count_program(*called, counts, seen);
    }
  }
}

// A source's counts as weights summing to 1 (nothing if it has none), added to `total`.
void add_normalized(const std::map<std::int64_t, double>& counts, std::map<std::int64_t, double>& total) {
  const double sum = std::accumulate(counts.begin(), counts.end(), 0.0, [](double s, const auto& e) { return s + e.second; });
  for (const auto& [value, count] : counts) total[value] += count / sum;
}

// Three decimals: what a spec file shows, so the shipped spec and a derivation compare equal.
double round3(double x) { return std::round(x * 1000) / 1000; }

std::vector<Weighted> rounded(const std::map<std::int64_t, double>& weights) {
  std::vector<Weighted> out;
  for (const auto& [value, weight] : weights) out.push_back({value, round3(weight)});
  return out;
}

nlohmann::ordered_json weighted_json(const std::vector<Weighted>& values) {
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const Weighted& w : values) list.push_back({{"value", w.value}, {"weight", w.weight}});
  return list;
}

// The blocks' shares of `counts` (summed over sources), 90% of them plus 10% spread evenly over
// every block of the grammar: one the sources lack (a transpose in a convolutional network) is
// still generated, rarely.
std::map<std::string, double> spread_shares(std::map<std::string, double> counts, const std::map<std::string, double>& grammar) {
  double total = 0;
  for (const auto& [kind, weight] : counts) total += weight;
  std::map<std::string, double> shares;
  for (const auto& [kind, unused] : grammar) {
    const double derived = total > 0 ? counts[kind] / total : 0.0;
    shares[kind] = round3(0.9 * derived + 0.1 / static_cast<double>(grammar.size()));
  }
  return shares;
}

}  // namespace

std::vector<Program> programs_of_source(const std::string& path) {
  std::vector<std::string> files;
  if (std::filesystem::is_directory(path)) {
    for (const auto& entry : std::filesystem::directory_iterator(path))
      if (entry.path().extension() == ".json") files.push_back(entry.path().string());
    std::sort(files.begin(), files.end());
    if (files.empty()) throw InputError(path, "", "a folder of program files (*.json); it has none");
  } else {
    files.push_back(path);
  }
  std::vector<Program> programs;
  for (const std::string& file : files) {
    const Corpus corpus = load_source(file);
    if (corpus.programs.empty()) throw InputError(file, "", "a source holding a program; it holds none");
    for (const auto& p : corpus.programs) programs.push_back(*p);
  }
  return programs;
}

ProgramStatistics program_statistics(const std::vector<std::vector<Program>>& sources) {
  std::map<std::int64_t, double> rows, features, image_batch, spatial, channels;
  std::map<std::string, double> blocks, network_blocks;
  double image_share = 0, volume_share = 0, network_share = 0;
  int shared = 0, with_convs = 0, with_blocks = 0;
  for (const auto& source : sources) {
    Counts counts;
    std::set<const Program*> seen;
    for (const Program& program : source) count_program(program, counts, seen);
    add_normalized(counts.rows, rows);
    add_normalized(counts.features, features);
    add_normalized(counts.image_batch, image_batch);
    add_normalized(counts.spatial, spatial);
    add_normalized(counts.channels, channels);
    auto& ops = counts.ops;
    if (ops["conv"] > 0) {
      volume_share += counts.volume_convs / ops["conv"];
      ++with_convs;
    }
    // A softmax also sums its row; the ops a conv, dense or residual block holds besides its
    // anchor (a bias add and an activation) are not elementwise blocks; a chain is about 2 ops.
    ops["layer_norm"] = std::max(0.0, ops["layer_norm"] - 0.5 * ops["softmax"]);
    auto& network = counts.network;
    ops["elementwise"] = std::max(0.0, ops["elementwise_ops"] - 2 * (ops["conv"] + ops["dense"] + ops["residual"] + network["grouped_conv"])) / 2;
    ops.erase("elementwise_ops");
    // A channel split slices twice and joins once; the other joins are concat blocks.
    network["channel_split"] = std::min(network["slice"] / 2, network["concatenate"]);
    network["concat"] = network["concatenate"] - network["channel_split"];
    network["embedding"] = network["gather"];
    for (const char* op_name : {"slice", "concatenate", "gather"}) network.erase(op_name);
    double network_sum = 0;
    for (const auto& [kind, n] : network) network_sum += n;
    for (const auto& [kind, n] : network)
      if (network_sum > 0) network_blocks[kind] += n / network_sum;
    double sum = 0;
    for (const auto& [kind, n] : ops) sum += n;
    for (const auto& [kind, n] : ops)
      if (sum > 0) blocks[kind] += n / sum;
    if (sum + network_sum > 0) {
      network_share += network_sum / (sum + network_sum);
      ++with_blocks;
    }
    const double image = ops["conv"] + ops["pool"] + ops["batch_norm"] + ops["global_pool"];
    const double matrix = ops["dense"] + ops["attention"] + ops["softmax"] + ops["layer_norm"] + ops["transpose"];
    if (image + matrix > 0) {
      image_share += image / (image + matrix);
      ++shared;
    }
  }
  ProgramStatistics statistics;
  statistics.rows = rounded(rows);
  statistics.features = rounded(features);
  statistics.image_batch = rounded(image_batch);
  statistics.spatial = rounded(spatial);
  statistics.channels = rounded(channels);
  const GeneratorSpec grammar = default_generator_spec();
  statistics.block_weights = spread_shares(blocks, grammar.block_weights);
  if (with_blocks > 0) statistics.network_share = round3(network_share / with_blocks);
  if (statistics.network_share > 0) statistics.network_block_weights = spread_shares(network_blocks, grammar.network_block_weights);
  if (shared > 0) statistics.image_share = round3(image_share / shared);
  if (with_convs > 0) statistics.volume_share = round3(volume_share / with_convs);
  return statistics;
}

nlohmann::ordered_json statistics_json(const ProgramStatistics& statistics) {
  nlohmann::ordered_json blocks = nlohmann::ordered_json::object();
  for (const auto& [kind, weight] : statistics.block_weights) blocks[kind] = weight;
  nlohmann::ordered_json result = {{"block_weights", blocks}, {"network_share", statistics.network_share}};
  if (!statistics.network_block_weights.empty()) {
    nlohmann::ordered_json network = nlohmann::ordered_json::object();
    for (const auto& [kind, weight] : statistics.network_block_weights) network[kind] = weight;
    result["network_block_weights"] = network;
  }
  result["image_share"] = statistics.image_share;
  result["volume_share"] = statistics.volume_share;
  result["rows"] = weighted_json(statistics.rows);
  result["features"] = weighted_json(statistics.features);
  result["image_batch"] = weighted_json(statistics.image_batch);
  result["spatial"] = weighted_json(statistics.spatial);
  result["channels"] = weighted_json(statistics.channels);
  return result;
}

}  // namespace perftune
