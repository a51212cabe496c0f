#include "surrogate/study/study_config.h"

#include <algorithm>
#include <filesystem>

#include "ir/data_path.h"
#include "ir/file_io.h"
#include "ir/input_error.h"
#include "ir/json_view.h"

namespace perftune {

namespace {

namespace fs = std::filesystem;

// The project's device specs, where the config's folder has none: fixed at configure time, so that
// a run outside the project root finds them, and an error names a folder that exists (a bare
// "configs/hardware" would be the working directory's).
#ifdef PERFTUNE_HARDWARE_DIR
constexpr const char* kProjectHardwareDir = PERFTUNE_HARDWARE_DIR;
#else
constexpr const char* kProjectHardwareDir = "configs/hardware";
#endif

std::optional<std::string> resolve(const std::string& relative, const std::string& config_file, bool data) {
  const fs::path p(relative);
  if (p.is_absolute()) return path_exists(p.string()) ? std::optional(p.string()) : std::nullopt;
  const fs::path folder = fs::path(config_file).parent_path();
  for (const fs::path& candidate : {p, folder / p, folder / ".." / ".." / p})
    if (path_exists(candidate.string())) return candidate.lexically_normal().string();
  if (data) return find_data(relative);
  return std::nullopt;
}

// A hyper-parameter section: an object inline, or the path of a file (resolved as above).
template <typename Params>
Params read_params(const JsonView& section, const std::string& config_path, const char* expected) {
  if (section.is_object()) return Params::from_json(section);
  const auto found = resolve(section.as_string(), config_path, /*data=*/false);
  if (!found) section.fail(expected);
  return Params::load(*found);
}

}  // namespace

const std::vector<std::string>& known_model_names() {
  static const std::vector<std::string> names{"learned", "trees", "analytical", "default", "random", "references"};
  return names;
}

StudyConfig StudyConfig::load(const std::string& path) {
  const nlohmann::json json = parse_json_file(path);
  const JsonView view(json, path);
  view.expect_keys({"comment", "sources", "split", "model", "train", "models", "checkpoint", "analytical_device",
                    "fusion_selection_weight", "trees", "learner"});
  StudyConfig config;
  config.file = path;
  const JsonView sources = view.at("sources");
  if (sources.size() == 0) sources.fail("at least one source");
  for (std::size_t i = 0; i < sources.size(); ++i) {
    const std::string relative = sources.at(i).as_string();
    const auto found = resolve(relative, path, /*data=*/true);
    if (!found) sources.at(i).fail("an existing file or folder (looked in the working directory, beside the config, the project "
                                   "root and the data folder " + data_dir() + ")");
    config.sources.push_back(*found);
  }
  config.split = SplitSpec::from_json(view.at("split"));
  if (auto model = view.find("model")) config.params = read_params<GnnParams>(*model, path, "an existing model parameter file (configs/models/*.json)");
  if (auto train = view.find("train")) config.train = TrainOptions::from_json(*train);
  if (auto trees = view.find("trees"))
    config.trees = read_params<TreeParams>(*trees, path, "an existing tree model parameter file (configs/models/trees.json)");
  if (auto learner = view.find("learner")) {
    config.learner = learner->as_string();
    if (config.learner != "gnn" && config.learner != "trees")
      learner->fail("\"gnn\" (the \"model\" section) or \"trees\" (the \"trees\" section)");
  }
  if (auto models = view.find("models")) {
    config.models = models->as_string_list();
    if (config.models.empty()) models->fail("at least one model");
    for (std::size_t i = 0; i < config.models.size(); ++i)
      if (std::find(known_model_names().begin(), known_model_names().end(), config.models[i]) == known_model_names().end())
        models->at(i).fail("one of \"learned\", \"trees\", \"analytical\", \"default\", \"random\", \"references\"");
  }
  if (auto checkpoint = view.find("checkpoint")) config.checkpoint = checkpoint->as_string();
  if (auto device = view.find("analytical_device")) {
    config.analytical_device = resolve(device->as_string(), path, /*data=*/false);
    if (!config.analytical_device) device->fail("an existing device spec (configs/hardware/*.json)");
  }
  if (auto weight = view.find("fusion_selection_weight")) config.fusion_selection_weight = weight->as_non_negative_number();
  if (config.fusion_selection_weight > 0 && config.train.epoch_selection == "shared")
    view.at("fusion_selection_weight").fail("0 with \"epoch_selection\": \"shared\" (the shared epoch is chosen on validation kernels alone)");
  if (!config.train.correction_scales.empty() && !config.params.analytical_feature)
    view.at("train").at("correction_scales").fail("no factors for a model without \"analytical_feature\" (there is no correction to shrink)");
  config.hardware_dir = resolve("configs/hardware", path, /*data=*/false).value_or(kProjectHardwareDir);
  return config;
}

}  // namespace perftune
