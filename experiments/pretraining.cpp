#include "experiments/pretraining.h"

#include <cstdint>
#include <filesystem>
#include <iomanip>
#include <sstream>

#include "ir/input_error.h"
#include "surrogate/gnn_cost_model.h"
#include "surrogate/trainer.h"

namespace perftune {

namespace {

namespace fs = std::filesystem;

// FNV-1a, 64 bit (offset basis and prime from the FNV reference): stable across runs and
// machines, unlike std::hash, so a checkpoint's name survives a restart on another build.
std::uint64_t fnv1a(const std::string& text) {
  std::uint64_t hash = 0xcbf29ce484222325ULL;
  for (const unsigned char c : text) {
    hash ^= c;
    hash *= 0x100000001b3ULL;
  }
  return hash;
}

nlohmann::ordered_json source_names(const std::vector<std::string>& sources) {
  nlohmann::ordered_json names = nlohmann::ordered_json::array();
  for (const std::string& name : sources) names.push_back(name);
  return names;
}

}  // namespace

nlohmann::ordered_json PretrainSpec::identity() const {
  return {{"params", params.to_json()}, {"train", train.to_json()}, {"on", on}};
}

std::string PretrainSpec::identity_hash() const {
  std::ostringstream out;
  out << std::hex << std::setw(8) << std::setfill('0') << (fnv1a(identity().dump()) & 0xffffffffULL);
  return out.str();
}

std::optional<PretrainSpec> parse_pretrain_spec(const JsonView& model,
                                                const std::function<std::string(const std::string&)>& resolve) {
  if (!model.is_object() || !model.has("pretrain")) return std::nullopt;
  model.expect_keys({"type", "pretrain", "residual"});  // "residual" is the campaign model's (model_spec.h)
  if (model.at("type").as_string() != "learned")
    model.at("type").fail("\"learned\" (only a learned model is pre-trained)");
  const JsonView section = model.at("pretrain");
  section.expect_keys({"params", "train", "on", "comment"});
  PretrainSpec spec;
  spec.file = section.file();
  spec.place = section.path();
  if (const auto params = section.find("params")) spec.params = GnnParams::load(resolve(params->as_string()));
  if (const auto train = section.find("train")) spec.train = TrainOptions::from_json(*train);
  if (const auto on = section.find("on")) {
    spec.on = on->as_string();
    if (spec.on != "other_devices")
      on->fail("\"other_devices\" (train on the same kernel measured on the experiment's other devices), found \"" +
               spec.on + "\"");
  }
  return spec;
}

std::vector<std::size_t> pretraining_sources(const std::vector<SpaceIdentity>& spaces, std::size_t held_out) {
  std::vector<std::size_t> sources;
  const SpaceIdentity& target = spaces.at(held_out);
  for (std::size_t i = 0; i < spaces.size(); ++i)
    if (i != held_out && spaces[i].kernel == target.kernel && spaces[i].device != target.device) sources.push_back(i);
  return sources;
}

std::string pretrained_checkpoint_path(const std::string& output, const std::string& space, const PretrainSpec& spec) {
  return (fs::path(output) / "models" / (space + "." + spec.identity_hash() + ".json")).string();
}

PretrainedModel ensure_pretrained(const PretrainSpec& spec, const std::string& checkpoint, const std::string& space,
                                  const std::vector<std::pair<std::string, const MeasuredKernel*>>& sources) {
  PretrainedModel model{space, checkpoint, {}, false, nullptr};
  for (const auto& [name, measured] : sources) model.sources.push_back(name);
  const nlohmann::ordered_json provenance = {
      {"pretrain", spec.identity()}, {"held_out", space}, {"sources", source_names(model.sources)}};

  if (fs::exists(checkpoint)) {
    // A restart: the checkpoint is the commit point of an earlier training (written last).
    const nlohmann::json saved = parse_json_file(checkpoint);
    const JsonView extra = JsonView(saved, checkpoint).at("extra");
    for (const char* key : {"pretrain", "held_out", "sources"})
      if (!extra.has(key) || extra.at(key).value() != nlohmann::json::parse(provenance[key].dump()))
        extra.fail("a model pre-trained for space " + space + " on " + provenance["sources"].dump() +
                   " with this experiment's pretrain section (" + spec.place + "); this one differs in \"" + key +
                   "\": delete it (and the runs that used it) to retrain");
    model.reused = true;
    model.training = extra.has("training") ? nlohmann::ordered_json::parse(extra.at("training").value().dump())
                                            : nlohmann::ordered_json(nullptr);
    return model;
  }

  std::vector<const MeasuredKernel*> train;
  for (const auto& [name, measured] : sources) train.push_back(measured);
  TrainReport report;
  std::unique_ptr<GnnCostModel> trained;
  try {
    trained = train_gnn(train, {}, spec.params, spec.train, nullptr, &report);
  } catch (const std::invalid_argument& error) {
    throw InputError(spec.file, spec.place,
                     "sources with measurements to pre-train on for space " + space + ": " + error.what());
  }
  model.training = report.to_json();
  nlohmann::ordered_json extra = provenance;
  extra["training"] = model.training;

  // Written in a private folder under its final file names (the JSON names its weights file), then
  // renamed into place, weights first: a checkpoint JSON present means its weights are complete.
  const fs::path final_json(checkpoint);
  const fs::path staging = final_json.parent_path() / ("." + final_json.stem().string() + ".partial");
  fs::remove_all(staging);
  fs::create_directories(staging);
  const fs::path staged_json = staging / final_json.filename();
  trained->save(staged_json.string(), extra);
  fs::rename(fs::path(staged_json).replace_extension(".pt"), fs::path(final_json).replace_extension(".pt"));
  fs::rename(staged_json, final_json);
  fs::remove_all(staging);
  return model;
}

}  // namespace perftune
