#include "autotuner/factories/model_spec.h"

#include "ir/data_path.h"

namespace perftune {

const SettingsTable<TargetResidualOptions>& residual_settings() {
  using O = TargetResidualOptions;
  const auto count = [](std::size_t O::*member, std::string what) {
    return [member, what](const JsonView& v, O& o) { o.*member = static_cast<std::size_t>(v.as_count("a count >= 0 of " + what)); };
  };
  static const auto table =
      SettingsTable<O>()
          .flag("fine_tune_prior", &O::fine_tune_prior, "the prior learns from the target too, not only the residual")
          .non_negative("exploration", &O::exploration, "kappa of the lower confidence bound mean - kappa * sd; 0: the mean")
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
          .flag("sample_residual", &O::sample_residual, "thompson: each further slot draws the residual jointly too")
          .custom("incumbent_neighbours", "integer >= 0", "0", "thompson: best measured configs whose one-knob changes join the candidates",
                  count(&O::incumbent_neighbours, "best measured configs whose one-knob changes to consider"))
          .custom("local_slots", "integer >= 0", "0", "thompson: batch slots for the best of those neighbours",
                  count(&O::local_slots, "batch slots for the incumbents' neighbours"))
          .flag("relevance", &O::relevance, "one length scale per knob, fitted by the marginal likelihood")
          .flag("categorical", &O::categorical, "with relevance: a knob's distance may be categorical")
          .check([](const JsonView& residual, const O& o) {
            if (o.batch != BatchChoice::kThompson)
              for (const char* key : {"batch_pool", "source_favourites", "sample_residual", "incumbent_neighbours", "local_slots"})
                if (const auto option = residual.find(key))
                  option->fail(std::string("no \"") + key + "\" unless \"batch\" is \"thompson\" (the top-k batch takes the best proposals only)");
            if (o.categorical && !o.relevance)
              residual.at("categorical").fail("no \"categorical\" without \"relevance\": true (the choice is a step of the per-knob relevance search)");
            if (o.local_slots > 0 && o.incumbent_neighbours == 0)
              residual.at("local_slots").fail("no \"local_slots\" without \"incumbent_neighbours\" >= 1 (whose neighbours they measure)");
          });
  return table;
}

namespace {

// The optional "residual" of a model with a prior (learned or recorded).
void parse_residual(const JsonView& view, ModelSpec& spec) {
  const auto residual = view.find("residual");
  if (!residual) return;
  if (!residual->is_object()) residual->fail("an object, e.g. {\"fine_tune_prior\": false}");
  spec.residual = true;
  residual_settings().read(*residual, spec.residual_options);
}

}  // namespace

ModelSpec parse_model_spec(const JsonView& view, const std::function<std::string(const std::string&)>& resolve) {
  ModelSpec spec;
  spec.file = view.file();
  spec.path = view.path();
  spec.type = view.at("type").as_string();
  if (spec.type == "none") {
    view.expect_keys({"type"});
  } else if (spec.type == "analytical") {
    view.expect_keys({"type", "device"});
    if (view.has("device")) spec.device = resolve(view.at("device").as_string());
    spec.hardware_dir = resolve("../hardware");
  } else if (spec.type == "learned") {
    view.expect_keys({"type", "checkpoint", "checkpoints", "params", "seed", "residual"});
    if (int{view.has("checkpoint")} + int{view.has("checkpoints")} + int{view.has("params")} > 1)
      view.fail("at most one of \"checkpoint\" (a model trained by perftune train), \"checkpoints\" (several, each a "
                "prior of the residual) or \"params\" (hyper-parameters of a model trained online from scratch); "
                "none is the shipped model");
    if (!view.has("checkpoint") && !view.has("checkpoints") && !view.has("params")) {
      spec.checkpoint = shipped_model_path();
      spec.shipped = true;
      if (view.has("seed")) view.at("seed").fail("no \"seed\" without \"params\": the shipped model is trained already");
    }
    if (const auto checkpoint = view.find("checkpoint")) spec.checkpoint = resolve(checkpoint->as_string());
    if (const auto checkpoints = view.find("checkpoints")) {
      for (const JsonView& path : checkpoints->elements()) spec.checkpoints.push_back(resolve(path.as_string()));
      if (spec.checkpoints.empty()) checkpoints->fail("at least one checkpoint path");
      if (spec.checkpoints.size() > 1 && !view.has("residual"))
        checkpoints->fail("a \"residual\" beside it: several checkpoints are combined as priors of the residual");
    }
    if (const auto params = view.find("params")) spec.params = resolve(params->as_string());
    if (const auto seed = view.find("seed")) spec.seed = seed->as_count();
    parse_residual(view, spec);
  } else if (spec.type == "recorded") {
    view.expect_keys({"type", "sources", "residual"});
    const JsonView sources = view.at("sources");
    for (const JsonView& path : sources.elements()) spec.recordings.push_back(resolve(path.as_string()));
    if (spec.recordings.empty()) sources.fail("at least one recording's path");
    parse_residual(view, spec);
    if (spec.recordings.size() > 1 && !spec.residual)
      sources.fail("a \"residual\" beside it: several recordings are combined as priors of the residual");
  } else if (spec.type == "gaussian_process") {
    view.expect_keys({"type", "residual"});
    parse_residual(view, spec);
    if (!spec.residual) view.fail("a \"residual\" (its options: the Gaussian process is the residual over a flat prior)");
  } else {
    view.at("type").fail("one of \"none\", \"analytical\", \"learned\", \"recorded\", \"gaussian_process\", found \"" +
                         spec.type + "\"");
  }
  return spec;
}

}  // namespace perftune
