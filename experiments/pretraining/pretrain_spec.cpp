#include "experiments/pretraining/pretrain_spec.h"

#include <filesystem>

#include "ir/stable_hash.h"

namespace perftune {

namespace fs = std::filesystem;

nlohmann::ordered_json PretrainSpec::identity() const {
  nlohmann::ordered_json identity = {{"params", params.to_json()}, {"train", train.to_json()}, {"on", on}};
  if (per_source) identity["per_source"] = true;
  if (on == "corpus") identity["corpus"] = corpus_written;
  return identity;
}

std::string PretrainSpec::identity_hash() const { return stable_hash_hex(identity().dump(), 8); }

std::optional<PretrainSpec> parse_pretrain_spec(const JsonView& model,
                                                const std::function<std::string(const std::string&)>& resolve) {
  if (!model.is_object() || !model.has("pretrain")) return std::nullopt;
  model.expect_keys({"type", "pretrain", "residual"});  // "residual" is the campaign model's (model_spec.h)
  if (model.at("type").as_string() != "learned")
    model.at("type").fail("\"learned\" (only a learned model is pre-trained)");
  const JsonView section = model.at("pretrain");
  section.expect_keys({"params", "train", "on", "corpus", "per_source", "comment"});
  PretrainSpec spec;
  spec.file = section.file();
  spec.place = section.path();
  spec.hardware_dir = resolve("../hardware");
  if (const auto params = section.find("params")) spec.params = GnnParams::load(resolve(params->as_string()));
  if (const auto train = section.find("train")) {
    spec.train = TrainOptions::from_json(*train);
    // Training through program sums needs each program's kernels scheduled as the backend would
    // (perftune train / eval pass the CPU tiling); pre-training has none, so it is refused, not ignored.
    if (spec.train.program_weight > 0)
      train->at("program_weight").fail("0 here: pre-training does not train through program sums (perftune train and eval do)");
  }
  if (const auto on = section.find("on")) {
    spec.on = on->as_string();
    if (spec.on != "other_devices" && spec.on != "corpus")
      on->fail("\"other_devices\" (train on the same kernel measured on the experiment's other devices) or \"corpus\" "
               "(on the record logs listed in \"corpus\"), found \"" + spec.on + "\"");
  }
  if (const auto corpus = section.find("corpus")) {
    if (spec.on != "corpus") corpus->fail("no \"corpus\" unless \"on\": \"corpus\"");
    for (const JsonView& path : corpus->elements()) {
      spec.corpus_written.push_back(path.as_string());
      spec.corpus.push_back(resolve(path.as_string()));
    }
  }
  if (spec.on == "corpus" && spec.corpus.empty()) section.fail("\"corpus\": the record logs to pre-train on");
  if (const auto per_source = section.find("per_source")) {
    spec.per_source = per_source->as_bool();
    if (spec.per_source && !model.has("residual"))
      per_source->fail("false, or a \"residual\" in the model section: the residual combines the per-source models "
                       "and learns on the target which to trust");
  }
  if (spec.on == "corpus" && spec.per_source) section.at("per_source").fail("false with \"on\": \"corpus\" (one model)");
  return spec;
}

std::vector<std::size_t> pretraining_sources(const std::vector<SpaceIdentity>& spaces, std::size_t held_out) {
  std::vector<std::size_t> sources;
  const SpaceIdentity& target = spaces.at(held_out);
  for (std::size_t i = 0; i < spaces.size(); ++i)
    if (i != held_out && spaces[i].source && spaces[i].kernel == target.kernel && spaces[i].device != target.device)
      sources.push_back(i);
  return sources;
}

std::string pretrained_checkpoint_path(const std::string& output, const std::string& space, const PretrainSpec& spec) {
  const std::string name = spec.on == "corpus" ? "corpus" : space;
  return (fs::path(output) / "models" / (name + "." + spec.identity_hash() + ".json")).string();
}

}  // namespace perftune
