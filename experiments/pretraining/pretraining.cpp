#include "experiments/pretraining/pretraining.h"

#include <filesystem>

#include "ir/input_error.h"
#include "surrogate/analytical/analytical_model.h"
#include "surrogate/gnn/gnn_cost_model.h"
#include "surrogate/training/trainer.h"

namespace perftune {

namespace {

namespace fs = std::filesystem;

nlohmann::ordered_json source_names(const std::vector<std::string>& sources) {
  nlohmann::ordered_json names = nlohmann::ordered_json::array();
  for (const std::string& name : sources) names.push_back(name);
  return names;
}

}  // namespace

PretrainedModel ensure_pretrained(const PretrainSpec& spec, const std::string& checkpoint, const std::string& space,
                                  const std::vector<std::string>& sources, const std::vector<const MeasuredKernel*>& kernels) {
  PretrainedModel model{space, checkpoint, sources, false, nullptr};
  nlohmann::ordered_json provenance = {{"pretrain", spec.identity()}};
  if (!spec.per_source && spec.on != "corpus") provenance["held_out"] = space;
  provenance["sources"] = source_names(model.sources);

  if (fs::exists(checkpoint)) {
    // A restart: the checkpoint is the commit point of an earlier training (written last).
    const nlohmann::json saved = parse_json_file(checkpoint);
    const JsonView extra = JsonView(saved, checkpoint).at("extra");
    const std::string what = provenance.contains("held_out") ? "for space " + space + " " : "";
    for (const auto& item : provenance.items())
      if (!extra.has(item.key()) || extra.at(item.key()).value() != nlohmann::json::parse(item.value().dump()))
        extra.fail("a model pre-trained " + what + "on " + provenance["sources"].dump() +
                   " with this experiment's pretrain section (" + spec.place + "); this one differs in \"" +
                   item.key() + "\": delete it (and the runs that used it) to retrain");
    model.reused = true;
    model.training = extra.has("training") ? nlohmann::ordered_json::parse(extra.at("training").value().dump())
                                            : nlohmann::ordered_json(nullptr);
    return model;
  }

  TrainReport report;
  std::unique_ptr<GnnCostModel> trained;
  try {
    GnnParams params = spec.params;
    if (params.analytical_feature && !params.analytical_device)
      params.analytical_device = load_device_spec(shared_device_spec_path(kernels, spec.hardware_dir));
    trained = train_gnn(kernels, {}, params, spec.train, nullptr, &report);
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
