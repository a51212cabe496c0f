#pragma once
// Builds the CostModel a campaign's "model" section names (parsed by autotuner/factories/model_spec.h).
#include <memory>
#include <string>

#include "autotuner/factories/model_spec.h"
#include "surrogate/cost_model.h"

namespace perftune {

// Null for "none". `source_device` (a record's device, "tpu", "cpu:...") picks the analytical
// model's spec when the campaign names none. Throws InputError for a model not available in this
// build or a spec that cannot be read.
std::unique_ptr<CostModel> make_model(const ModelSpec& spec, const std::string& source_device = "");

// A trained model from its checkpoint (perftune train's output), shared: what a strategy's
// "rerank" names (strategy_factory.h).
std::shared_ptr<CostModel> load_reranker(const std::string& checkpoint);

}  // namespace perftune
