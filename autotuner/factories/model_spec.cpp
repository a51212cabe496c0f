#include "autotuner/factories/model_spec.h"

#include "ir/data_path.h"

namespace perftune {

namespace {

// The residual's own keys.
const SettingsTable<TargetResidualOptions>& residual_model_settings() {
  using O = TargetResidualOptions;
  static const auto table =
      SettingsTable<O>()
          .flag("fine_tune_prior", &O::fine_tune_prior, "the prior learns from the target too, not only the residual")
          .non_negative("exploration", &O::exploration, "kappa of the lower confidence bound mean - kappa * sd; 0: the mean")
          .flag("sample_residual", &O::sample_residual, "thompson: each further slot draws the residual jointly too")
          .flag("relevance", &O::relevance, "one length scale per knob, fitted by the marginal likelihood")
          .flag("categorical", &O::categorical, "with relevance: a knob's distance may be categorical")
          .check([](const JsonView& residual, const O& o) {
            if (o.categorical && !o.relevance)
              residual.at("categorical").fail("no \"categorical\" without \"relevance\": true (the choice is a step of the per-knob relevance search)");
          });
  return table;
}

// The batch policy's keys (search/batch_policy.h).
const SettingsTable<BatchPolicyOptions>& batch_policy_settings() {
  using O = BatchPolicyOptions;
  const auto count = [](std::size_t O::*member, std::string what) {
    return [member, what](const JsonView& v, O& o) { o.*member = static_cast<std::size_t>(v.as_count("a count >= 0 of " + what)); };
  };
  static const auto table =
      SettingsTable<O>()
          .custom("batch", "\"top\" or \"thompson\"", "\"top\"", "the k best proposals, or batch Thompson sampling over the priors' weights",
                  [](const JsonView& v, O& o) {
                    const std::string batch = v.as_string();
                    if (batch != "top" && batch != "thompson")
                      v.fail("\"top\" (the k best proposals) or \"thompson\" (batch Thompson sampling over the priors' weights)");
                    o.batch = batch == "thompson" ? BatchChoice::kThompson : BatchChoice::kTop;
                  })
          .count("batch_pool", &O::batch_pool, "thompson: proposals asked per batch slot")
          .custom("source_favourites", "integer >= 0", "0", "thompson: each prior's own best configs added to the candidates",
                  count(&O::source_favourites, "each prior's own best configs to consider"))
          .custom("incumbent_neighbours", "integer >= 0", "0", "thompson: best measured configs whose one-knob changes join the candidates",
                  count(&O::incumbent_neighbours, "best measured configs whose one-knob changes to consider"))
          .custom("local_slots", "integer >= 0", "0", "thompson: batch slots for the best of those neighbours",
                  count(&O::local_slots, "batch slots for the incumbents' neighbours"))
          .check([](const JsonView& residual, const O& o) {
            if (o.local_slots > 0 && o.incumbent_neighbours == 0)
              residual.at("local_slots").fail("no \"local_slots\" without \"incumbent_neighbours\" >= 1 (whose neighbours they measure)");
          });
  return table;
}

}  // namespace

const SettingsTable<ResidualSpec>& residual_settings() {
  static const auto table =
      SettingsTable<ResidualSpec>()
          // Checked first: the parts' own rules assume a Thompson batch.
          .check([](const JsonView& residual, const ResidualSpec& spec) {
            if (spec.batch.batch != BatchChoice::kThompson)
              for (const char* key : {"batch_pool", "source_favourites", "sample_residual", "incumbent_neighbours", "local_slots"})
                if (const auto option = residual.find(key))
                  option->fail(std::string("no \"") + key + "\" unless \"batch\" is \"thompson\" (the top-k batch takes the best proposals only)");
          })
          .merge(&ResidualSpec::model, residual_model_settings())
          .merge(&ResidualSpec::batch, batch_policy_settings());
  return table;
}

BatchPolicyOptions batch_policy_options(const ModelSpec& spec) {
  BatchPolicyOptions options = spec.residual ? spec.residual_options.batch : BatchPolicyOptions{};
  options.space_filling_start = spec.type == "gaussian_process";  // no prior to rank the first batch
  return options;
}

namespace {

using S = ModelSpec;

// A path as written; parse_model_spec resolves it against the campaign's folder once read.
std::function<void(const JsonView&, S&)> path(std::string S::*member) {
  return [member](const JsonView& v, S& s) { s.*member = v.as_string(); };
}

std::function<void(const JsonView&, S&)> paths(std::vector<std::string> S::*member, std::string what) {
  return [member, what](const JsonView& v, S& s) {
    for (const JsonView& element : v.elements()) (s.*member).push_back(element.as_string());
    if ((s.*member).empty()) v.fail("at least one " + what);
  };
}

// The optional "residual" of a model with a prior; its own keys are residual_settings()'s.
SettingsTable<S>&& with_residual(SettingsTable<S>&& table, const std::string& doc) {
  return std::move(table).custom("residual", "object", "none", doc, [](const JsonView& v, S& s) {
    if (!v.is_object()) v.fail("an object, e.g. {\"fine_tune_prior\": false}");
    s.residual = true;
    residual_settings().read(v, s.residual_options);
  });
}

}  // namespace

const SettingsTable<ModelSpec>& analytical_model_settings() {
  static const auto table = SettingsTable<S>().custom(
      "device", "path", "the source's device in ../hardware", "a device spec (configs/hardware/*.json) the roofline reads", path(&S::device));
  return table;
}

const SettingsTable<ModelSpec>& learned_model_settings() {
  static const auto table =
      with_residual(SettingsTable<S>()
                        .custom("checkpoint", "path", "the shipped model", "a model trained by perftune train", path(&S::checkpoint))
                        .custom("checkpoints", "list of paths", "none", "several trained models, each a prior of the residual",
                                paths(&S::checkpoints, "checkpoint path"))
                        .custom("params", "path", "none", "hyper-parameters (configs/models/*.json) of a model trained online from scratch",
                                path(&S::params))
                        .custom("seed", "integer >= 0", "1", "with params: the initial weights' seed",
                                [](const JsonView& v, S& s) { s.seed = v.as_count(); }),
                    "a Gaussian-process correction by the target's measurements (below)")
          .check([](const JsonView& view, const S& s) {
            if (s.checkpoints.size() > 1 && !s.residual)
              view.at("checkpoints").fail("a \"residual\" beside it: several checkpoints are combined as priors of the residual");
          });
  return table;
}

const SettingsTable<ModelSpec>& recorded_model_settings() {
  static const auto table =
      with_residual(SettingsTable<S>().custom("sources", "list of paths, required", "none", "recordings of other devices, each a prior",
                                              paths(&S::recordings, "recording's path")),
                    "a Gaussian-process correction by the target's measurements (below); needed for several sources")
          .check([](const JsonView& view, const S& s) {
            if (s.recordings.size() > 1 && !s.residual)
              view.at("sources").fail("a \"residual\" beside it: several recordings are combined as priors of the residual");
          });
  return table;
}

const SettingsTable<ModelSpec>& gaussian_process_settings() {
  static const auto table =
      with_residual(SettingsTable<S>(), "required: the Gaussian process is the residual over a flat prior").check([](const JsonView& view, const S& s) {
        if (!s.residual) view.fail("a \"residual\" (its options: the Gaussian process is the residual over a flat prior)");
      });
  return table;
}

ModelSpec parse_model_spec(const JsonView& view, const std::function<std::string(const std::string&)>& resolve) {
  ModelSpec spec;
  spec.file = view.file();
  spec.path = view.path();
  spec.type = view.at("type").as_string();
  if (spec.type == "none") {
    view.expect_keys({"type"});
  } else if (spec.type == "analytical") {
    analytical_model_settings().read(view, spec, {"type"});
    spec.hardware_dir = resolve("../hardware");
  } else if (spec.type == "learned") {
    learned_model_settings().check_keys(view, {"type"});
    // Which model it is comes first: the other keys' rules depend on it.
    if (int{view.has("checkpoint")} + int{view.has("checkpoints")} + int{view.has("params")} > 1)
      view.fail("at most one of \"checkpoint\" (a model trained by perftune train), \"checkpoints\" (several, each a "
                "prior of the residual) or \"params\" (hyper-parameters of a model trained online from scratch); "
                "none is the shipped model");
    if (!view.has("checkpoint") && !view.has("checkpoints") && !view.has("params") && view.has("seed"))
      view.at("seed").fail("no \"seed\" without \"params\": the shipped model is trained already");
    learned_model_settings().read_members(view, spec);
  } else if (spec.type == "recorded") {
    recorded_model_settings().check_keys(view, {"type"});
    view.at("sources");  // required: its absence is named before any other key is read
    recorded_model_settings().read_members(view, spec);
  } else if (spec.type == "gaussian_process") {
    gaussian_process_settings().read(view, spec, {"type"});
  } else {
    view.at("type").fail("one of \"none\", \"analytical\", \"learned\", \"recorded\", \"gaussian_process\", found \"" +
                         spec.type + "\"");
  }
  for (std::string* written : {&spec.device, &spec.checkpoint, &spec.params})
    if (!written->empty()) *written = resolve(*written);
  for (std::vector<std::string>* written : {&spec.checkpoints, &spec.recordings})
    for (std::string& one : *written) one = resolve(one);
  if (spec.type == "learned" && spec.checkpoint.empty() && spec.checkpoints.empty() && spec.params.empty()) {
    spec.checkpoint = shipped_model_path();
    spec.shipped = true;
  }
  return spec;
}

}  // namespace perftune
