#pragma once
// The "strategy" section of a campaign: which search strategy proposes, with its parameters
// (every parameter optional; defaults as in the strategy's options struct). Each strategy's keys
// are declared once, in one settings table (strategy_factory.cpp), which parses them, refuses
// unknown ones and writes their reference: docs/settings.md.
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
// The strategies' part of docs/settings.md (settings_reference.h).
std::string strategy_settings_markdown();

// Throws std::invalid_argument for "autoscheduler_sampling", which proposes no configs, and for a
// re-ranking strategy without `load_reranker`.
std::unique_ptr<Strategy> make_strategy(const StrategySpec& spec, const RerankerLoader& load_reranker = {});

}  // namespace perftune
