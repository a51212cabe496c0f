#pragma once
// A corpus collection's model-guided configs (offline/corpus_collection.h, "model_picks"): per
// kernel, what a tuner's first round with a trained model would measure besides its anchors.
// Adams2019's training schedules come from its beam search under the current model; a corpus of
// random and heuristic-neighbourhood schedules alone never shows a model where its own favourites
// are wrong, and those are the configs its search sends to the hardware.
//   "model_picks": {"per_kernel": 8,
//                   "model": {"type": "learned", "checkpoint": "../../runs/halide_picks/model.json"},
//                   "strategy": {"type": "evolution", "anchored": {"share": 0.5}},   // as a campaign's
//                   "seed": 1}
// Paths resolve against the collect config's folder, as a campaign's do.
#include <cstddef>
#include <cstdint>
#include <string>

#include "autotuner/factories/model_spec.h"
#include "autotuner/factories/strategy_factory.h"
#include "ir/json_view.h"
#include "offline/corpus_collection.h"

namespace perftune {

struct ModelPicksSpec {
  std::size_t per_kernel = 0;
  ModelSpec model;
  StrategySpec strategy;
  std::uint64_t seed = 1;
};

// Reads spec.model_picks (throws InputError naming spec.source and the field).
ModelPicksSpec parse_model_picks(const CollectSpec& spec);

// Builds the model once; each call is the strategy's round-0 proposals for a kernel
// with nothing measured, ranked by the model, the first n (the anchors excluded). Deterministic
// for a given model, kernel and seed.
ProposeConfigs make_model_picker(const ModelPicksSpec& spec);

}  // namespace perftune
