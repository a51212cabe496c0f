#include "autotuner/factories/model_spec.h"

#include "ir/data_path.h"

namespace perftune {

namespace {

// The optional "residual" of a model with a prior (learned or recorded).
void parse_residual(const JsonView& view, ModelSpec& spec) {
  const auto residual = view.find("residual");
  if (!residual) return;
  if (!residual->is_object()) residual->fail("an object, e.g. {\"fine_tune_prior\": false}");
  residual->expect_keys({"fine_tune_prior", "exploration", "batch", "batch_pool", "source_favourites", "sample_residual",
                        "incumbent_neighbours", "local_slots", "relevance", "categorical"});
  spec.residual = true;
  if (const auto fine_tune = residual->find("fine_tune_prior")) spec.residual_fine_tune_prior = fine_tune->as_bool();
  if (const auto exploration = residual->find("exploration")) spec.residual_exploration = exploration->as_non_negative_number();
  if (const auto batch = residual->find("batch")) {
    spec.residual_batch = batch->as_string();
    if (spec.residual_batch != "top" && spec.residual_batch != "thompson")
      batch->fail("\"top\" (the k best proposals) or \"thompson\" (batch Thompson sampling over the priors' weights)");
  }
  for (const char* key : {"batch_pool", "source_favourites", "sample_residual", "incumbent_neighbours", "local_slots"})
    if (const auto option = residual->find(key); option && spec.residual_batch != "thompson")
      option->fail(std::string("no \"") + key + "\" unless \"batch\" is \"thompson\" (the top-k batch takes the best proposals only)");
  if (const auto sample = residual->find("sample_residual")) spec.residual_sample_residual = sample->as_bool();
  if (const auto relevance = residual->find("relevance")) spec.residual_relevance = relevance->as_bool();
  if (const auto categorical = residual->find("categorical")) {
    spec.residual_categorical = categorical->as_bool();
    if (spec.residual_categorical && !spec.residual_relevance)
      categorical->fail("no \"categorical\" without \"relevance\": true (the choice is a step of the per-knob relevance search)");
  }
  if (const auto pool = residual->find("batch_pool")) spec.residual_batch_pool = static_cast<std::size_t>(pool->as_positive_int());
  auto count = [&](const char* key, const char* what, std::size_t& into) {
    if (const auto option = residual->find(key))
      into = static_cast<std::size_t>(option->as_count(std::string("a count >= 0 of ") + what));
  };
  count("source_favourites", "each prior's own best configs to consider", spec.residual_source_favourites);
  count("incumbent_neighbours", "best measured configs whose one-knob changes to consider", spec.residual_incumbent_neighbours);
  count("local_slots", "batch slots for the incumbents' neighbours", spec.residual_local_slots);
  if (spec.residual_local_slots > 0 && spec.residual_incumbent_neighbours == 0)
    residual->find("local_slots")->fail("no \"local_slots\" without \"incumbent_neighbours\" >= 1 (whose neighbours they measure)");
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
