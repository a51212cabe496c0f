#include "surrogate/gnn/gnn_cost_model.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <stdexcept>

#include "surrogate/evaluation/model_evaluation.h"
#include "surrogate/features/config_features.h"
#include "surrogate/gnn/gnn_state.h"
#include "surrogate/gnn/rank_losses.h"

namespace perftune {

namespace {
// Configs per network call. Late join: bounds the [batch, pooled + config] input to ~20 MB.
// Early join: bounds the [nodes, batch, hidden] activations to ~3 MB per 100-node layer.
constexpr std::size_t kLateChunk = 16384;
constexpr std::size_t kEarlyChunk = 128;
}  // namespace

std::uint64_t member_seed(std::uint64_t seed, std::size_t member) {
  return member == 0 ? seed : seed ^ (0x9e3779b97f4a7c15ULL * static_cast<std::uint64_t>(member));
}

GnnCostModel::State::State(GnnParams params_in, FeatureVocabulary vocabulary_in, TrainOptions options_in)
    : params(std::move(params_in)), vocabulary(std::move(vocabulary_in)), options(options_in), rng(options_in.seed ^ 0x57a7ULL) {
  if (params.analytical_feature && !params.analytical_device)
    throw std::invalid_argument("the hybrid model (analytical_feature) needs the device spec of its analytical estimates");
  if (params.analytical_feature) analytical = std::make_unique<AnalyticalModel>(*params.analytical_device);
  for (std::size_t m = 0; m < static_cast<std::size_t>(std::max(1, options.ensemble)); ++m) {
    const std::uint64_t seed = member_seed(options.seed, m);
    torch::manual_seed(seed);
    members.push_back(EnsembleMember{GnnModel(params), nullptr, Rng(seed), {}});
  }
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
  for (EnsembleMember& member : members) member.embeddings.clear();
  if (features) {
    cache.clear();
    graphs.clear();
  }
}

GnnCostModel::State::Inputs GnnCostModel::State::inputs(const Kernel& kernel, const SearchSpace& space,
                                                         std::span<const Config> configs) {
  const auto features = cache.get(kernel);
  const ConfigFeaturizer featurizer(*features, space, vocabulary);
  Inputs in{&graph(kernel), config_features(kernel, *features, space, configs), {}};
  if (params.join != "late" && featurizer.has_fuse_knobs()) {
    in.fused = torch::empty({static_cast<std::int64_t>(configs.size()), in.graph->nodes});
    featurizer.node_fused_flags(configs, std::span<float>(in.fused.data_ptr<float>(), configs.size() * features->node_count));
  }
  return in;
}

torch::Tensor GnnCostModel::State::evaluate(const Inputs& in, const std::string& key, std::size_t member) {
  torch::NoGradGuard no_grad;
  EnsembleMember& m = members.at(member);
  m.model->eval();
  const std::int64_t total = in.configs.size(0);
  if (m.model->late_join()) {
    auto it = m.embeddings.find(key);
    if (it == m.embeddings.end()) it = m.embeddings.emplace(key, m.model->embed_graph(*in.graph)).first;
    if (total <= static_cast<std::int64_t>(kLateChunk)) return m.model->predict_late(it->second, in.configs);
    std::vector<torch::Tensor> parts;
    for (std::int64_t start = 0; start < total; start += kLateChunk)
      parts.push_back(m.model->predict_late(it->second, in.configs.narrow(0, start, std::min<std::int64_t>(kLateChunk, total - start))));
    return torch::cat(parts);
  }
  std::vector<torch::Tensor> parts;
  for (std::int64_t start = 0; start < total; start += kEarlyChunk) {
    const auto n = std::min<std::int64_t>(kEarlyChunk, total - start);
    parts.push_back(m.model->predict_early(*in.graph, in.configs.narrow(0, start, n), in.fused.defined() ? in.fused.narrow(0, start, n) : in.fused));
  }
  return parts.size() == 1 ? parts.front() : torch::cat(parts);
}

torch::Tensor GnnCostModel::State::forward(const Kernel& kernel, const SearchSpace& space, std::span<const Config> configs,
                                           bool training, std::size_t member) {
  const Inputs in = inputs(kernel, space, configs);
  if (!training) return evaluate(in, kernel.key(), member);
  GnnModel& model = members.at(member).model;
  model->train();
  return model->forward(*in.graph, in.configs, in.fused);
}

torch::Tensor GnnCostModel::State::predict(const Kernel& kernel, const SearchSpace& space, std::span<const Config> configs) {
  const Inputs in = inputs(kernel, space, configs);
  torch::Tensor sum = evaluate(in, kernel.key(), 0);
  for (std::size_t m = 1; m < members.size(); ++m) sum = sum + evaluate(in, kernel.key(), m);
  const torch::Tensor mean = members.size() == 1 ? sum : sum / static_cast<double>(members.size());
  if (!analytical || correction_scale == 1.0) return mean;
  const auto prior = analytical_log_seconds(in.configs);
  return prior + correction_scale * (mean - prior);
}

double GnnCostModel::State::train_step(const std::vector<Group>& groups, std::size_t member, const std::vector<SumGroup>& sums) {
  EnsembleMember& m = members.at(member);
  if (!m.optimizer)
    m.optimizer = std::make_unique<torch::optim::Adam>(m.model->parameters(), torch::optim::AdamOptions(options.learning_rate));
  m.optimizer->zero_grad();
  const double loss = backward(groups, member, sums);
  m.optimizer->step();
  trained = true;
  m.embeddings.clear();
  return loss;
}

torch::Tensor GnnCostModel::State::forward_sum(const SumGroup& sum, std::size_t member) {
  // One network call per kernel for all of its schedules, then the terms back in their order.
  std::map<const Kernel*, std::vector<std::size_t>> by_kernel;
  for (std::size_t t = 0; t < sum.terms.size(); ++t) by_kernel[sum.terms[t].kernel].push_back(t);
  std::vector<torch::Tensor> parts;
  std::vector<std::int64_t> position(sum.terms.size());
  std::int64_t next = 0;
  for (const auto& [kernel, terms] : by_kernel) {
    std::vector<Config> schedules;
    for (std::size_t t : terms) {
      schedules.push_back(sum.terms[t].schedule);
      position[t] = next++;
    }
    parts.push_back(forward(*kernel, *sum.terms[terms.front()].space, schedules, /*training=*/true, member));
  }
  const torch::Tensor term_log_seconds = torch::cat(parts).index_select(0, torch::tensor(position));
  std::vector<torch::Tensor> placements;
  for (const std::vector<std::size_t>& terms : sum.placements) {
    std::vector<std::int64_t> index(terms.begin(), terms.end());
    placements.push_back(torch::logsumexp(term_log_seconds.index_select(0, torch::tensor(index)), 0));
  }
  return torch::stack(placements);
}

double GnnCostModel::State::backward(const std::vector<Group>& groups, std::size_t member, const std::vector<SumGroup>& sums) {
  GradientSync* sync = options.gradient_sync;
  auto total = torch::zeros({1});
  bool any = false;
  for (std::size_t i = 0; i < groups.size(); ++i) {
    const Group& group = groups[i];
    if (group.configs.size() < 2 || (sync && !sync->owns(i))) continue;
    auto pred = forward(*group.kernel, *group.space, group.configs, /*training=*/true, member);
    auto target = torch::tensor(group.log_seconds);
    total = total + combined_loss(pred, target, options.loss);
    any = true;
  }
  for (std::size_t j = 0; j < sums.size() && options.program_weight > 0; ++j) {
    if (sums[j].placements.size() < 2 || (sync && !sync->owns(groups.size() + j))) continue;
    total = total + options.program_weight * combined_loss(forward_sum(sums[j], member), torch::tensor(sums[j].log_seconds), options.loss);
    any = true;
  }
  if (any) total.backward();
  const double loss = total.item<double>();
  if (!sync) return loss;
  // One all-reduce of every gradient and the loss. A parameter this rank's groups never reached
  // contributes zeros (a zero gradient leaves Adam's update at zero, as an absent one would).
  std::vector<torch::Tensor> parameters = members.at(member).model->parameters();
  std::vector<torch::Tensor> parts;
  for (torch::Tensor& p : parameters) {
    if (!p.grad().defined()) p.mutable_grad() = torch::zeros_like(p);
    parts.push_back(p.grad().reshape({-1}));
  }
  parts.push_back(torch::tensor({static_cast<float>(loss)}));
  torch::Tensor flat = torch::cat(parts).contiguous();
  sync->sum(std::span<float>(flat.data_ptr<float>(), static_cast<std::size_t>(flat.numel())));
  std::int64_t offset = 0;
  torch::NoGradGuard no_grad;
  for (torch::Tensor& p : parameters) {
    p.mutable_grad().copy_(flat.slice(0, offset, offset + p.numel()).view_as(p));
    offset += p.numel();
  }
  return flat[offset].item<double>();
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
  const auto node_rows = torch::from_blob(nodes.data(), {static_cast<std::int64_t>(nodes.size()) / node_width, node_width});
  const auto config_rows = torch::from_blob(configs.data(), {static_cast<std::int64_t>(configs.size()) / config_width, config_width});
  for (EnsembleMember& member : members) member.model->set_input_statistics(node_rows, config_rows);
  invalidate(false);
}

void GnnCostModel::State::fit_output_offset(const std::vector<Group>& groups) {
  double sum = 0.0;
  std::size_t count = 0;
  for (const Group& group : groups) {
    if (group.configs.empty()) continue;
    torch::Tensor prior;
    if (analytical)
      prior = analytical_log_seconds(config_features(*group.kernel, *cache.get(*group.kernel), *group.space, group.configs)).contiguous();
    for (std::size_t i = 0; i < group.configs.size(); ++i)
      sum += group.log_seconds[i] - (analytical ? prior.data_ptr<float>()[i] : 0.0f);
    count += group.configs.size();
  }
  if (count == 0) return;
  torch::NoGradGuard no_grad;
  for (EnsembleMember& member : members) member.model->output_offset.fill_(sum / static_cast<double>(count));
  invalidate(false);
}

void GnnCostModel::State::calibrate(const std::vector<Group>& groups, std::size_t member) {
  torch::NoGradGuard no_grad;
  GnnModel& model = members.at(member).model;
  model->calibration.copy_(torch::tensor({1.0f, 0.0f}));
  members.at(member).embeddings.clear();
  std::vector<torch::Tensor> predicted, measured;
  for (const Group& group : groups) {
    if (group.configs.empty()) continue;
    predicted.push_back(forward(*group.kernel, *group.space, group.configs, /*training=*/false, member));
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
  members.at(member).embeddings.clear();
}

GnnCostModel::State::Group sample_group(const Kernel& kernel, const SearchSpace& space,
                                        std::span<const Measurement> measurements, std::size_t count, Rng& rng) {
  std::vector<std::size_t> ok = ok_indices(measurements);
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

GnnCostModel::State::Group sample_fast_group(const Kernel& kernel, const SearchSpace& space,
                                             std::span<const Measurement> fastest_first, std::size_t fast_count,
                                             std::size_t count, double fast_share, Rng& rng) {
  fast_count = std::min(fast_count, fastest_first.size());
  const auto fast = std::min(count, static_cast<std::size_t>(std::lround(fast_share * static_cast<double>(count))));
  GnnCostModel::State::Group group = sample_group(kernel, space, fastest_first.first(fast_count), fast, rng);
  const GnnCostModel::State::Group rest = sample_group(kernel, space, fastest_first.subspan(fast_count), count - fast, rng);
  group.configs.insert(group.configs.end(), rest.configs.begin(), rest.configs.end());
  group.log_seconds.insert(group.log_seconds.end(), rest.log_seconds.begin(), rest.log_seconds.end());
  return group;
}

void hold_in_group(GnnCostModel::State::Group& group, const Measurement& measurement) {
  if (group.configs.empty() || std::find(group.configs.begin(), group.configs.end(), measurement.config) != group.configs.end())
    return;
  group.configs.back() = measurement.config;
  group.log_seconds.back() = static_cast<float>(std::log(measurement.result.seconds));
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
  const auto out = state_->predict(kernel, space, configs).contiguous();
  std::copy_n(out.data_ptr<float>(), configs.size(), log_seconds.begin());
}

std::size_t GnnCostModel::ensemble_size() const { return state_->members.size(); }

void GnnCostModel::predict_member(std::size_t member, const Kernel& kernel, const SearchSpace& space,
                                  std::span<const Config> configs, std::span<float> log_seconds) {
  if (log_seconds.size() != configs.size())
    throw std::invalid_argument("predict_member: " + std::to_string(configs.size()) + " configs but " +
                                std::to_string(log_seconds.size()) + " outputs");
  if (member >= state_->members.size())
    throw std::out_of_range("predict_member: member " + std::to_string(member) + " of an ensemble of " +
                            std::to_string(state_->members.size()));
  if (configs.empty()) return;
  std::lock_guard lock(state_->mutex);
  const auto out = state_->forward(kernel, space, configs, /*training=*/false, member).contiguous();
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
  const std::vector<std::size_t> ok = ok_indices(measurements);
  for (std::size_t i : ok) entry->measurements.push_back(measurements[i]);
  const std::size_t added = ok.size();
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
  // Every member fine-tunes, each on its own batches.
  for (std::size_t member = 0; member < s.members.size(); ++member) {
    Rng& rng = s.members[member].rng;
    for (int step = 0; step < s.options.update_steps; ++step) {
      std::vector<State::Group> groups;
      groups.push_back(sample_group(current.kernel, *current.space, current.measurements,
                                    static_cast<std::size_t>(s.options.configs_per_kernel), rng));
      for (int k = 1; k < s.options.kernels_per_step && s.replay.size() > 1; ++k) {
        const ReplayEntry& other = s.replay[uniform_index(rng, s.replay.size() - 1)];
        groups.push_back(sample_group(other.kernel, *other.space, other.measurements,
                                      static_cast<std::size_t>(s.options.configs_per_kernel), rng));
      }
      s.train_step(groups, member);
    }
  }
}

double GnnCostModel::loss(const Kernel& kernel, const SearchSpace& space, std::span<const Measurement> measurements) {
  std::lock_guard lock(state_->mutex);
  std::vector<Config> configs;
  std::vector<float> targets;
  for (std::size_t i : ok_indices(measurements)) {
    configs.push_back(measurements[i].config);
    targets.push_back(static_cast<float>(std::log(measurements[i].result.seconds)));
  }
  if (configs.empty()) return 0.0;
  torch::NoGradGuard no_grad;
  const auto pred = state_->predict(kernel, space, configs);
  return combined_loss(pred, torch::tensor(targets), state_->options.loss).item<double>();
}

}  // namespace perftune
