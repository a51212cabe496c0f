#pragma once
// Pre-training inside an experiment: a strategy whose model section reads
//   {"type": "learned", "pretrain": {"params": "../models/generic_knobs.json",
//                                    "train": {...TrainOptions...}, "on": "other_devices"}}
// is tuned, on each space S, with a GNN trained (as `perftune train` trains: surrogate/training/trainer.h)
// on every other space of the experiment that holds the same kernel (same kernel name, so gemm/*
// with gemm/*) measured on another device than S. S itself never enters its own model's training.
// One checkpoint per (space, pretrain section), shared by every seed and strategy using it, at
//   OUTPUT/models/SPACE.HASH.json (+ .pt)   HASH: of the resolved hyper-parameters and options
// written atomically and reused, not retrained, when the experiment restarts. The section may also
// hold a campaign model's "residual" (autotuner/factories/model_spec.h): each run then corrects the loaded
// model with its own measurements; the checkpoint does not depend on it.
//
// With "on": "corpus" and "corpus": [LOG, ...] it trains one model on every kernel of those record
// logs (programs no space holds, e.g. the generated corpus), at OUTPUT/models/corpus.HASH.json,
// for every space, live ones included.
//
// With "per_source": true the section trains one model per source space instead, on that space
// alone, at OUTPUT/models/SOURCE.HASH.json: a kernel measured on k devices needs k trainings, each
// model serving the k - 1 held-out spaces of the other devices, whose runs combine them as priors
// of one residual ({"checkpoints": [...]}, autotuner/factories/model_spec.h).
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "experiments/pretraining/pretrain_spec.h"
#include "ir/corpus.h"

namespace perftune {

struct PretrainedModel {
  std::string space;                 // the held-out space it is for; per_source: its one source
  std::string checkpoint;
  std::vector<std::string> sources;  // space names trained on
  bool reused = false;               // found on disk (a restart), not trained now
  nlohmann::ordered_json training;   // TrainReport::to_json() of when it was trained
};

// The model for `space` at `checkpoint`: loaded if a checkpoint of this identity and these sources
// is there, else trained on `kernels` (of the spaces or record logs named by `sources`) and written atomically (the weights
// first, the JSON last, each renamed into place). With spec.per_source, `space` is the model's one
// source (and its provenance names no held-out space: it serves several). Throws InputError naming the checkpoint if one
// there was trained on other sources, or naming spec.place if no source has two valid runtimes.
PretrainedModel ensure_pretrained(const PretrainSpec& spec, const std::string& checkpoint, const std::string& space,
                                  const std::vector<std::string>& sources, const std::vector<const MeasuredKernel*>& kernels);

}  // namespace perftune
