#include "surrogate/trees/tree_cost_model.h"

#include <filesystem>

#include "ir/file_io.h"
#include "ir/input_error.h"
#include "surrogate/trees/tree_checkpoint_header.h"
#include "surrogate/trees/tree_labels.h"

namespace perftune {

namespace {

std::string booster_path_for(const std::string& checkpoint) {
  return std::filesystem::path(checkpoint).replace_extension(".ubj").string();
}

}  // namespace

// One target kernel's measurements and the shallow trees fitted to them.
struct TreeCostModel::Target {
  std::vector<Config> configs;
  std::vector<double> seconds;
  std::unique_ptr<XgbBooster> booster;  // null until enough measurements
};

TreeCostModel::TreeCostModel(TreeParams params, TreeFeaturizer featurizer, std::unique_ptr<XgbBooster> booster)
    : params_(std::move(params)), featurizer_(std::move(featurizer)), booster_(std::move(booster)) {
  // Search calls predict from the tuner's thread with thousands of configs; one thread keeps
  // parallel experiment runs from oversubscribing the cores.
  booster_->set_param("nthread", "1");
}

TreeCostModel::~TreeCostModel() = default;

std::vector<float> TreeCostModel::margins(const std::vector<float>& rows) const {
  return booster_->predict_margin(XgbMatrix(rows, featurizer_.width()));
}

void TreeCostModel::predict(const Kernel& kernel, const SearchSpace& space, std::span<const Config> configs,
                            std::span<float> log_seconds) {
  if (log_seconds.size() != configs.size()) throw std::invalid_argument("TreeCostModel::predict: one output per config");
  if (configs.empty()) return;
  std::lock_guard lock(mutex_);
  const std::vector<float> rows = featurizer_.rows(kernel, space, configs);
  std::vector<float> scores = margins(rows);
  if (const auto it = targets_.find(kernel.key()); it != targets_.end() && it->second->booster) {
    XgbMatrix matrix(rows, featurizer_.width());
    matrix.set_base_margin(scores);
    scores = it->second->booster->predict_margin(matrix);
  }
  const float sign = higher_is_faster(params_.objective) ? -1.0f : 1.0f;
  for (std::size_t i = 0; i < configs.size(); ++i) log_seconds[i] = sign * scores[i];
}

void TreeCostModel::update(const Kernel& kernel, const SearchSpace& space, std::span<const Measurement> measurements) {
  if (params_.online_rounds == 0) return;
  std::lock_guard lock(mutex_);
  auto& target = targets_[kernel.key()];
  if (!target) target = std::make_unique<Target>();
  std::size_t added = 0;
  for (const Measurement& m : measurements)
    if (m.result.ok()) {
      target->configs.push_back(m.config);
      target->seconds.push_back(m.result.seconds);
      ++added;
    }
  // Fewer than 4 points say little about which knobs matter; the pre-trained ranking stands.
  if (added == 0 || target->configs.size() < 4) return;
  const std::vector<float> rows = featurizer_.rows(kernel, space, target->configs);
  XgbMatrix matrix(rows, featurizer_.width());
  matrix.set_labels(tree_labels(params_.objective, target->seconds));
  const unsigned group = static_cast<unsigned>(target->configs.size());
  matrix.set_groups(std::span<const unsigned>(&group, 1));
  matrix.set_base_margin(margins(rows));
  auto booster = std::make_unique<XgbBooster>(&matrix);
  booster->set_param("objective", params_.objective);
  booster->set_param("max_depth", std::to_string(params_.online_depth));
  booster->set_param("eta", "0.3");  // a few points, a few trees: each must count (not tuned)
  booster->set_param("min_child_weight", "0");
  booster->set_param("nthread", "1");
  booster->set_param("seed", std::to_string(params_.seed));
  for (int round = 0; round < params_.online_rounds; ++round) booster->boost(matrix, round);
  target->booster = std::move(booster);
}

bool TreeCostModel::is_checkpoint(const nlohmann::json& json) { return is_tree_checkpoint(json); }

void TreeCostModel::save(const std::string& checkpoint, const nlohmann::ordered_json& extra) const {
  const std::filesystem::path path(checkpoint);
  if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path());
  const std::string booster = booster_path_for(checkpoint);
  write_file_atomically(booster, booster_->save_ubjson());
  nlohmann::ordered_json json;
  json["format"] = kTreeCheckpointFormat;
  json["feature_schema_version"] = kFeatureSchemaVersion;
  json["booster"] = std::filesystem::path(booster).filename().string();
  json["params"] = params_.to_json();
  json["vocabulary"] = featurizer_.vocabulary().to_json();
  if (!extra.is_null()) json["extra"] = extra;
  write_file_atomically(checkpoint, json.dump(2) + "\n");
}

std::unique_ptr<TreeCostModel> TreeCostModel::load(const std::string& checkpoint) {
  TreeCheckpointHeader header = read_tree_checkpoint_header(checkpoint);
  TreeParams params = std::move(header.params);
  const std::string& booster_file = header.booster;
  TreeFeaturizer featurizer = [&] {
    try {
      return make_tree_featurizer(std::move(header.vocabulary), params);
    } catch (const std::invalid_argument& error) {
      throw InputError(checkpoint, "$.params.schedule_features", std::string("schedule features this program provides: ") + error.what());
    }
  }();
  auto booster = std::make_unique<XgbBooster>();
  try {
    booster->load_ubjson(read_file(booster_file));
  } catch (const std::runtime_error& error) {
    throw InputError(booster_file, "", std::string("an XGBoost model (") + error.what() + ")");
  }
  if (booster->feature_count() != featurizer.width())
    throw InputError(booster_file, "", "a model of " + std::to_string(featurizer.width()) + " features, as " + checkpoint +
                                           "'s vocabulary gives, found " + std::to_string(booster->feature_count()));
  return std::make_unique<TreeCostModel>(std::move(params), std::move(featurizer), std::move(booster));
}

}  // namespace perftune
