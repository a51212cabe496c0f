#include "surrogate/gnn_cost_model.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <stdexcept>

#include "surrogate/config_features.h"
#include "surrogate/gnn_state.h"
#include "surrogate/rank_losses.h"

namespace perftune {

namespace {
// Configs per network call. Late join: bounds the [batch, pooled + config] input to ~20 MB.
// Early join: bounds the [nodes, batch, hidden] activations to ~3 MB per 100-node layer.
constexpr std::size_t kLateChunk = 16384;
constexpr std::size_t kEarlyChunk = 128;
}  // namespace

GnnCostModel::State::State(GnnParams params_in, FeatureVocabulary vocabulary_in, TrainOptions options_in)
    : params(std::move(params_in)), vocabulary(std::move(vocabulary_in)), options(options_in), rng(options_in.seed) {
  if (params.analytical_feature && !params.analytical_device)
    throw std::invalid_argument("the hybrid model (analytical_feature) needs the device spec of its analytical estimates");
  if (params.analytical_feature) analytical = std::make_unique<AnalyticalModel>(*params.analytical_device);
  torch::manual_seed(options.seed);
  model = GnnModel(params);
}

torch::Tensor GnnCostModel::State::config_features(const Kernel& kernel, const KernelGraphFeatures& features,
                                                   const SearchSpace& space, std::span<const Config> configs) {
  const ConfigFeaturizer featurizer(features, space, vocabulary);
  const auto total = static_cast<std::int64_t>(configs.size());
  auto rows = torch::empty({total, static_cast<std::int64_t>(kConfigFeatureWidth)});
  float* data = rows.data_ptr<float>();
  featurizer.featurize(configs, std::span<float>(data, configs.size() * kConfigFeatureWidth));
  if (analytical) {
    std::vector<float> block(configs.size() * kAnalyticalFeatureWidth);
    analytical_features(*analytical, kernel, space, configs, block);
    for (std::size_t c = 0; c < configs.size(); ++c)
      std::copy_n(block.data() + c * kAnalyticalFeatureWidth, kAnalyticalFeatureWidth,
                  data + c * kConfigFeatureWidth + kAnalyticalFeatureOffset);
  }
  return rows;
}

const GraphTensors& GnnCostModel::State::graph(const Kernel& kernel) {
  auto it = graphs.find(kernel.key());
  if (it == graphs.end()) it = graphs.emplace(kernel.key(), make_graph_tensors(*cache.get(kernel), params.aggregation)).first;
  return it->second;
}

void GnnCostModel::State::invalidate(bool features) {
  embeddings.clear();
  if (features) {
    cache.clear();
    graphs.clear();
  }
}

torch::Tensor GnnCostModel::State::forward(const Kernel& kernel, const SearchSpace& space, std::span<const Config> configs,
                                           bool training) {
  const auto features = cache.get(kernel);
  const ConfigFeaturizer featurizer(*features, space, vocabulary);
  const GraphTensors& g = graph(kernel);
  const auto total = static_cast<std::int64_t>(configs.size());
  const auto config_tensor = config_features(kernel, *features, space, configs);
  torch::Tensor fused;
  if (!model->late_join() && featurizer.has_fuse_knobs()) {
    fused = torch::empty({total, g.nodes});
    featurizer.node_fused_flags(configs, std::span<float>(fused.data_ptr<float>(), configs.size() * features->node_count));
  }
  if (training) {
    model->train();
    return model->forward(g, config_tensor, fused);
  }
  torch::NoGradGuard no_grad;
  model->eval();
  if (model->late_join()) {
    auto it = embeddings.find(kernel.key());
    if (it == embeddings.end()) it = embeddings.emplace(kernel.key(), model->embed_graph(g)).first;
    if (configs.size() <= kLateChunk) return model->predict_late(it->second, config_tensor);
    std::vector<torch::Tensor> parts;
    for (std::int64_t start = 0; start < total; start += kLateChunk)
      parts.push_back(model->predict_late(it->second, config_tensor.narrow(0, start, std::min<std::int64_t>(kLateChunk, total - start))));
    return torch::cat(parts);
  }
  std::vector<torch::Tensor> parts;
  for (std::int64_t start = 0; start < total; start += kEarlyChunk) {
    const auto n = std::min<std::int64_t>(kEarlyChunk, total - start);
    parts.push_back(model->predict_early(g, config_tensor.narrow(0, start, n), fused.defined() ? fused.narrow(0, start, n) : fused));
  }
  return parts.size() == 1 ? parts.front() : torch::cat(parts);
}

double GnnCostModel::State::train_step(const std::vector<Group>& groups) {
  if (!optimizer) optimizer = std::make_unique<torch::optim::Adam>(model->parameters(), torch::optim::AdamOptions(options.learning_rate));
  optimizer->zero_grad();
  auto total = torch::zeros({1});
  for (const Group& group : groups) {
    if (group.configs.size() < 2) continue;
    auto pred = forward(*group.kernel, *group.space, group.configs, /*training=*/true);
    auto target = torch::tensor(group.log_seconds);
    total = total + combined_loss(pred, target, options.loss);
  }
  total.backward();
  optimizer->step();
  trained = true;
  invalidate(false);
  return total.item<double>();
}

void GnnCostModel::State::fit_input_statistics(const std::vector<Group>& groups) {
  std::vector<float> nodes, configs;
  std::set<std::string> seen;
  for (const Group& group : groups) {
    if (group.configs.empty()) continue;
    const auto features = cache.get(*group.kernel);
    if (seen.insert(group.kernel->key()).second)
      nodes.insert(nodes.end(), features->node_features.begin(), features->node_features.end());
    const auto rows = config_features(*group.kernel, *features, *group.space, group.configs);
    configs.insert(configs.end(), rows.data_ptr<float>(), rows.data_ptr<float>() + rows.numel());
  }
  if (nodes.empty() || configs.empty()) return;
  const auto node_width = static_cast<std::int64_t>(kNodeFeatureWidth), config_width = static_cast<std::int64_t>(kConfigFeatureWidth);
  model->set_input_statistics(torch::from_blob(nodes.data(), {static_cast<std::int64_t>(nodes.size()) / node_width, node_width}),
                             torch::from_blob(configs.data(), {static_cast<std::int64_t>(configs.size()) / config_width, config_width}));
  invalidate(false);
}

void GnnCostModel::State::fit_output_offset(const std::vector<Group>& groups) {
  double sum = 0.0;
  std::size_t count = 0;
  for (const Group& group : groups) {
    if (group.configs.empty()) continue;
    torch::Tensor rows;
    if (analytical) rows = config_features(*group.kernel, *cache.get(*group.kernel), *group.space, group.configs);
    for (std::size_t i = 0; i < group.configs.size(); ++i)
      sum += group.log_seconds[i] -
             (analytical ? rows.data_ptr<float>()[i * kConfigFeatureWidth + kAnalyticalFeatureOffset + kAnalyticalLogSeconds] : 0.0f);
    count += group.configs.size();
  }
  if (count == 0) return;
  torch::NoGradGuard no_grad;
  model->output_offset.fill_(sum / static_cast<double>(count));
  invalidate(false);
}

void GnnCostModel::State::calibrate(const std::vector<Group>& groups) {
  torch::NoGradGuard no_grad;
  model->calibration.copy_(torch::tensor({1.0f, 0.0f}));
  invalidate(false);
  std::vector<torch::Tensor> predicted, measured;
  for (const Group& group : groups) {
    if (group.configs.empty()) continue;
    predicted.push_back(forward(*group.kernel, *group.space, group.configs, /*training=*/false));
    measured.push_back(torch::tensor(group.log_seconds));
  }
  if (predicted.empty()) return;
  const auto x = torch::cat(predicted).to(torch::kFloat64), y = torch::cat(measured).to(torch::kFloat64);
  const double variance = (x - x.mean()).pow(2).mean().item<double>();
  if (variance <= 0) return;
  const double slope = ((x - x.mean()) * (y - y.mean())).mean().item<double>() / variance;
  if (!(slope > 0)) return;
  const double shift = y.mean().item<double>() - slope * x.mean().item<double>();
  model->calibration.copy_(torch::tensor({static_cast<float>(slope), static_cast<float>(shift)}));
  invalidate(false);
}

GnnCostModel::State::Group sample_group(const Kernel& kernel, const SearchSpace& space,
                                        std::span<const Measurement> measurements, std::size_t count, Rng& rng) {
  std::vector<std::size_t> ok;
  for (std::size_t i = 0; i < measurements.size(); ++i)
    if (measurements[i].result.ok() && measurements[i].result.seconds > 0) ok.push_back(i);
  // Partial Fisher-Yates: the first `count` entries become a uniform sample without replacement.
  const std::size_t take = std::min(count, ok.size());
  for (std::size_t i = 0; i < take; ++i) std::swap(ok[i], ok[i + uniform_index(rng, ok.size() - i)]);
  GnnCostModel::State::Group group{&kernel, &space, {}, {}};
  for (std::size_t i = 0; i < take; ++i) {
    group.configs.push_back(measurements[ok[i]].config);
    group.log_seconds.push_back(static_cast<float>(std::log(measurements[ok[i]].result.seconds)));
  }
  return group;
}

GnnCostModel::GnnCostModel(GnnParams params, FeatureVocabulary vocabulary, TrainOptions options)
    : state_(std::make_unique<State>(std::move(params), std::move(vocabulary), options)) {}

GnnCostModel::~GnnCostModel() = default;

const GnnParams& GnnCostModel::params() const { return state_->params; }
const FeatureVocabulary& GnnCostModel::vocabulary() const { return state_->vocabulary; }
const TrainOptions& GnnCostModel::options() const { return state_->options; }

void GnnCostModel::predict(const Kernel& kernel, const SearchSpace& space, std::span<const Config> configs,
                           std::span<float> log_seconds) {
  if (log_seconds.size() != configs.size())
    throw std::invalid_argument("predict: " + std::to_string(configs.size()) + " configs but " +
                                std::to_string(log_seconds.size()) + " outputs");
  if (configs.empty()) return;
  std::lock_guard lock(state_->mutex);
  const auto out = state_->forward(kernel, space, configs, /*training=*/false).contiguous();
  std::copy_n(out.data_ptr<float>(), configs.size(), log_seconds.begin());
}

void GnnCostModel::update(const Kernel& kernel, const SearchSpace& space, std::span<const Measurement> measurements) {
  std::lock_guard lock(state_->mutex);
  State& s = *state_;
  if (s.vocabulary.extend(kernel, space, static_cast<std::size_t>(s.params.opcode_capacity))) s.invalidate(true);
  auto entry = std::find_if(s.replay.begin(), s.replay.end(), [&](const ReplayEntry& e) { return e.kernel.key() == kernel.key(); });
  if (entry == s.replay.end()) {
    s.replay.push_back({kernel, std::make_shared<SearchSpace>(space), {}});
    entry = s.replay.end() - 1;
  }
  std::size_t added = 0;
  for (const Measurement& m : measurements)
    if (m.result.ok() && m.result.seconds > 0) {
      entry->measurements.push_back(m);
      ++added;
    }
  auto& kept = entry->measurements;
  if (kept.size() > static_cast<std::size_t>(s.options.replay_configs))
    kept.erase(kept.begin(), kept.end() - s.options.replay_configs);
  // Most recently updated kernel last; the oldest leaves first.
  std::rotate(entry, entry + 1, s.replay.end());
  while (s.replay.size() > static_cast<std::size_t>(s.options.replay_kernels)) s.replay.pop_front();
  if (added == 0) return;
  // From scratch, start the output at the data's scale so the first steps rank instead of shifting.
  const ReplayEntry& current = s.replay.back();
  if (!s.trained) {
    const std::vector<State::Group> all{
        sample_group(current.kernel, *current.space, current.measurements, current.measurements.size(), s.rng)};
    s.fit_output_offset(all);
    s.fit_input_statistics(all);
  }
  for (int step = 0; step < s.options.update_steps; ++step) {
    std::vector<State::Group> groups;
    groups.push_back(sample_group(current.kernel, *current.space, current.measurements,
                                  static_cast<std::size_t>(s.options.configs_per_kernel), s.rng));
    for (int k = 1; k < s.options.kernels_per_step && s.replay.size() > 1; ++k) {
      const ReplayEntry& other = s.replay[uniform_index(s.rng, s.replay.size() - 1)];
      groups.push_back(sample_group(other.kernel, *other.space, other.measurements,
                                    static_cast<std::size_t>(s.options.configs_per_kernel), s.rng));
    }
    s.train_step(groups);
  }
}

double GnnCostModel::loss(const Kernel& kernel, const SearchSpace& space, std::span<const Measurement> measurements) {
  std::lock_guard lock(state_->mutex);
  std::vector<Config> configs;
  std::vector<float> targets;
  for (const Measurement& m : measurements)
    if (m.result.ok() && m.result.seconds > 0) {
      configs.push_back(m.config);
      targets.push_back(static_cast<float>(std::log(m.result.seconds)));
    }
  if (configs.empty()) return 0.0;
  torch::NoGradGuard no_grad;
  const auto pred = state_->forward(kernel, space, configs, /*training=*/false);
  return combined_loss(pred, torch::tensor(targets), state_->options.loss).item<double>();
}

}  // namespace perftune
