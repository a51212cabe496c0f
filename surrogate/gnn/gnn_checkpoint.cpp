// GnnCostModel::save / load: torch::save of the weights plus a JSON file beside them that stamps
// the feature-schema version and carries everything needed to featurize as in training
// (Halide's habit of signing weight files with the schema they were trained for).
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "ir/file_io.h"
#include "ir/input_error.h"
#include "surrogate/gnn/gnn_checkpoint_header.h"
#include "surrogate/gnn/gnn_cost_model.h"
#include "surrogate/gnn/gnn_state.h"

namespace perftune {

namespace {

// A one-member model writes its weights as torch::save(model) always did, so checkpoints from
// before ensembles load unchanged; an ensemble writes one archive holding a sub-archive per member.
std::string member_key(std::size_t member) { return "member" + std::to_string(member); }

std::string weights_path_for(const std::string& checkpoint) {
  return std::filesystem::path(checkpoint).replace_extension(".pt").string();
}

// Parameter and buffer shapes by name; an ensemble's names are prefixed with the member's archive key.
std::map<std::string, std::vector<std::int64_t>> tensor_shapes(const std::vector<EnsembleMember>& members) {
  std::map<std::string, std::vector<std::int64_t>> shapes;
  for (std::size_t m = 0; m < members.size(); ++m) {
    const std::string prefix = members.size() == 1 ? "" : member_key(m) + ".";
    for (const auto& item : members[m].model->named_parameters()) shapes[prefix + item.key()] = item.value().sizes().vec();
    for (const auto& item : members[m].model->named_buffers()) shapes[prefix + item.key()] = item.value().sizes().vec();
  }
  return shapes;
}

// The largest magnitude a checkpoint's tensor may hold: a standardizing scale is at most 1e6 (one
// over a std of 1e-6, gnn_model.cpp) and a trained weight far smaller, while a value near float's
// edge (3e38) overflows in the first product and every prediction is Inf or NaN.
constexpr double kMaxWeightMagnitude = 1e10;

void check_weights_finite(const std::vector<EnsembleMember>& members, const std::string& weights) {
  torch::NoGradGuard no_grad;
  for (std::size_t m = 0; m < members.size(); ++m) {
    const std::string prefix = members.size() == 1 ? "" : member_key(m) + ".";
    auto check = [&](const std::string& name, const torch::Tensor& tensor) {
      if (tensor.numel() == 0) return;
      if (!torch::isfinite(tensor).all().item<bool>())
        throw InputError(weights, "parameter " + prefix + name, "finite weights (this tensor holds NaN or Inf)");
      if (tensor.abs().max().item<double>() > kMaxWeightMagnitude)
        throw InputError(weights, "parameter " + prefix + name, "weights of magnitude at most 1e10 (this tensor holds " +
                                                                 std::to_string(tensor.abs().max().item<double>()) + ")");
    };
    for (const auto& item : members[m].model->named_parameters()) check(item.key(), item.value());
    for (const auto& item : members[m].model->named_buffers()) check(item.key(), item.value());
  }
}

}  // namespace

void GnnCostModel::save(const std::string& checkpoint, const nlohmann::ordered_json& extra) const {
  std::lock_guard lock(state_->mutex);
  const std::filesystem::path path(checkpoint);
  if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path());
  const std::string weights = weights_path_for(checkpoint);
  try {
    const auto& members = state_->members;
    if (members.size() == 1) {
      torch::save(members.front().model, weights);
    } else {
      torch::serialize::OutputArchive archive;
      for (std::size_t m = 0; m < members.size(); ++m) {
        torch::serialize::OutputArchive member;
        members[m].model->save(member);
        archive.write(member_key(m), member);
      }
      archive.save_to(weights);
    }
  } catch (const c10::Error& error) {
    throw std::runtime_error(weights + ": cannot write the weights: " + error.what_without_backtrace());
  }
  nlohmann::ordered_json json;
  json["format"] = kGnnCheckpointFormat;
  json["feature_schema_version"] = kFeatureSchemaVersion;
  json["weights"] = std::filesystem::path(weights).filename().string();
  json["params"] = state_->params.to_json();
  json["train"] = state_->options.to_json();
  json["vocabulary"] = state_->vocabulary.to_json();
  // Written only when shrunk, so checkpoints from before the factor existed read as factor 1.
  if (state_->correction_scale != 1.0) json["correction_scale"] = state_->correction_scale;
  if (!extra.is_null()) json["extra"] = extra;
  std::ofstream out(checkpoint);
  out << json.dump(2) << "\n";
  if (!out) throw std::runtime_error(checkpoint + ": cannot write the checkpoint");
}

std::unique_ptr<GnnCostModel> GnnCostModel::load(const std::string& checkpoint) {
  GnnCheckpointHeader header = read_gnn_checkpoint_header(checkpoint);
  const std::string& weights = header.weights;
  // Read through the one bounded reader (a FIFO or a device is refused, a size is capped), then
  // handed to libtorch from memory.
  std::istringstream weight_bytes(read_file(weights));
  auto model = std::make_unique<GnnCostModel>(std::move(header.params), std::move(header.vocabulary), std::move(header.options));
  State& s = model->state();
  const auto expected = tensor_shapes(s.members);
  try {
    if (s.members.size() == 1) {
      torch::load(s.members.front().model, weight_bytes);
    } else {
      torch::serialize::InputArchive archive;
      archive.load_from(weight_bytes);
      for (std::size_t m = 0; m < s.members.size(); ++m) {
        torch::serialize::InputArchive member;
        if (!archive.try_read(member_key(m), member))
          throw InputError(weights, member_key(m), "the weights of ensemble member " + std::to_string(m) + " of the " +
                                                       std::to_string(s.members.size()) + " that " + checkpoint + " describes");
        s.members[m].model->load(member);
      }
    }
  } catch (const c10::Error& error) {
    // A missing or renamed parameter: libtorch names the tensor it could not find.
    throw InputError(weights, "parameters", "every parameter of the model described by " + checkpoint + " (" +
                                                error.what_without_backtrace() + ")");
  }
  for (const auto& [name, shape] : tensor_shapes(s.members))
    if (expected.at(name) != shape)
      throw InputError(weights, "parameter " + name, "the shape the hyper-parameters in " + checkpoint + " give");
  check_weights_finite(s.members, weights);
  s.correction_scale = header.correction_scale;
  s.trained = true;
  return model;
}

}  // namespace perftune
