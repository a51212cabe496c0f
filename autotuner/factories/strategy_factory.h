#pragma once
// The "strategy" section of a campaign: which search strategy proposes, with its parameters
// (every parameter optional; defaults as in the strategy's options struct).
//   {"type": "random"}
//   {"type": "exhaustive", "max_configs": 1000000}
//   {"type": "annealing", "chains", "steps", "early_stop", "start_temperature", "end_temperature",
//    "restart_after", "mutation": {"random_value", "neighbour_step", "several_knobs"}, "warmup"}
//   {"type": "evolution", "population", "generations", "mutation_probability", "measured_share", "mutation",
//    "warmup"}                       warmup: random proposals for the first N measurements (search/warmup.h)
//   either of those two with "anchored": {"share", "depth", "beam", "measured_anchors", "diversity_pool", "rerank"}:
//                                      a share of each round's proposals from the model's best configs near
//                                      the campaign's first configs and the best measured, each part picked
//                                      for knob coverage from diversity_pool x as many (search/anchored_search.h),
//                                      or with "rerank": {"checkpoint": MODEL, "pool": 8} the best by a second,
//                                      slower model of pool x as many
//   {"type": "measured_annealing", "chains", "start_temperature", "min_temperature", "cooling", "mutation"}
//   {"type": "measured_evolution", "parents", "mutation_probability", "mutation"}
//   {"type": "autoscheduler_sampling", ...}   a peer, not a strategy over the space: Halide's
//                                      Adams2019 sampled (autotuner/autoscheduler_sampling.h); the
//                                      campaign runner runs it instead of the tuning loop
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <variant>

#include "autotuner/autoscheduler_sampling.h"
#include "ir/json_view.h"
#include "search/anchored_search.h"
#include "search/evolutionary_search.h"
#include "search/exhaustive_search.h"
#include "search/measured_annealing.h"
#include "search/measured_evolution.h"
#include "search/simulated_annealing.h"
#include "search/strategy.h"

namespace perftune {

struct RandomOptions {};

struct StrategySpec {
  std::string type;
  std::variant<RandomOptions, ExhaustiveOptions, AnnealingOptions, EvolutionOptions, MeasuredAnnealingOptions,
               MeasuredEvolutionOptions, AutoschedulerSamplingOptions>
      options;
  std::optional<AnchoredOptions> anchored;  // annealing and evolution only
  std::string rerank_checkpoint;            // the anchored re-ranker's model, if any (as written; the campaign
                                            // resolves it against its file, as a model's checkpoint)
};

// Loads the model a strategy re-ranks with (model_factory.h: load_reranker), kept out of this
// file so that its parsing builds without the models (fuzz/).
using RerankerLoader = std::function<std::shared_ptr<CostModel>(const std::string& checkpoint)>;

// Throws InputError naming the JSON path of an unknown key, a wrong type or an out-of-range value.
StrategySpec parse_strategy_spec(const JsonView& view);
// Throws std::invalid_argument for "autoscheduler_sampling", which proposes no configs, and for a
// re-ranking strategy without `load_reranker`.
std::unique_ptr<Strategy> make_strategy(const StrategySpec& spec, const RerankerLoader& load_reranker = {});

}  // namespace perftune
