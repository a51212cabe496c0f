#include "autotuner/factories/strategy_factory.h"

#include "search/random_search.h"

namespace perftune {

namespace {

std::size_t get_count(const JsonView& view, std::string_view key, std::size_t fallback) {
  const auto member = view.find(key);
  return member ? static_cast<std::size_t>(member->as_positive_int()) : fallback;
}

double get_non_negative(const JsonView& view, std::string_view key, double fallback) {
  const auto member = view.find(key);
  return member ? member->as_non_negative_number() : fallback;
}

double get_probability(const JsonView& view, std::string_view key, double fallback) {
  const auto member = view.find(key);
  if (!member) return fallback;
  const double value = member->as_number();
  if (value < 0 || value > 1) member->fail("a probability in [0, 1], found " + std::to_string(value));
  return value;
}

// "warmup": random proposals for the first N measurements (0 allowed: none).
std::size_t get_warmup(const JsonView& view) {
  const auto member = view.find("warmup");
  if (!member) return 0;
  return static_cast<std::size_t>(member->as_count("a count of measurements >= 0"));
}

MutationWeights parse_mutation(const JsonView& parent) {
  MutationWeights weights;
  const auto view = parent.find("mutation");
  if (!view) return weights;
  view->expect_keys({"random_value", "neighbour_step", "several_knobs"});
  weights.random_value = get_non_negative(*view, "random_value", weights.random_value);
  weights.neighbour_step = get_non_negative(*view, "neighbour_step", weights.neighbour_step);
  weights.several_knobs = get_non_negative(*view, "several_knobs", weights.several_knobs);
  if (!(weights.random_value + weights.neighbour_step + weights.several_knobs > 0))
    view->fail("mutation weights with a positive sum");
  return weights;
}

std::optional<AnchoredOptions> parse_anchored(const JsonView& parent, std::string& rerank_checkpoint) {
  const auto view = parent.find("anchored");
  if (!view) return std::nullopt;
  view->expect_keys({"share", "depth", "beam", "measured_anchors", "diversity_pool", "rerank"});
  AnchoredOptions options;
  options.share = get_probability(*view, "share", options.share);
  options.depth = get_count(*view, "depth", options.depth);
  options.beam = get_count(*view, "beam", options.beam);
  if (const auto member = view->find("measured_anchors"))
    options.measured_anchors = static_cast<std::size_t>(member->as_count("a count of configs >= 0"));
  options.diversity_pool = get_count(*view, "diversity_pool", options.diversity_pool);
  if (const auto rerank = view->find("rerank")) {
    rerank->expect_keys({"checkpoint", "pool"});
    options.rerank_pool = get_count(*rerank, "pool", 8);
    if (options.rerank_pool < 2) rerank->at("pool").fail("a pool of 2 or more times the picks");
    rerank_checkpoint = rerank->at("checkpoint").as_string();
  }
  return options;
}

}  // namespace

StrategySpec parse_strategy_spec(const JsonView& view) {
  StrategySpec spec;
  spec.type = view.at("type").as_string();
  if (spec.type == "random") {
    view.expect_keys({"type"});
    spec.options = RandomOptions{};
  } else if (spec.type == "exhaustive") {
    view.expect_keys({"type", "max_configs"});
    ExhaustiveOptions options;
    options.max_configs = get_count(view, "max_configs", options.max_configs);
    spec.options = options;
  } else if (spec.type == "annealing") {
    view.expect_keys({"type", "chains", "steps", "early_stop", "start_temperature", "end_temperature", "restart_after",
                      "mutation", "warmup", "anchored"});
    AnnealingOptions options;
    options.chains = get_count(view, "chains", options.chains);
    options.steps = get_count(view, "steps", options.steps);
    options.early_stop = get_count(view, "early_stop", options.early_stop);
    options.start_temperature = get_non_negative(view, "start_temperature", options.start_temperature);
    options.end_temperature = get_non_negative(view, "end_temperature", options.end_temperature);
    options.restart_after = get_count(view, "restart_after", options.restart_after);
    options.warmup = get_warmup(view);
    options.mutation = parse_mutation(view);
    spec.options = options;
    spec.anchored = parse_anchored(view, spec.rerank_checkpoint);
  } else if (spec.type == "evolution") {
    view.expect_keys({"type", "population", "generations", "mutation_probability", "measured_share", "mutation", "warmup",
                      "anchored"});
    EvolutionOptions options;
    options.population = get_count(view, "population", options.population);
    options.generations = get_count(view, "generations", options.generations);
    options.mutation_probability = get_probability(view, "mutation_probability", options.mutation_probability);
    options.measured_share = get_probability(view, "measured_share", options.measured_share);
    options.warmup = get_warmup(view);
    options.mutation = parse_mutation(view);
    spec.options = options;
    spec.anchored = parse_anchored(view, spec.rerank_checkpoint);
  } else if (spec.type == "measured_annealing") {
    view.expect_keys({"type", "chains", "start_temperature", "min_temperature", "cooling", "mutation"});
    MeasuredAnnealingOptions options;
    options.chains = get_count(view, "chains", options.chains);
    options.start_temperature = get_non_negative(view, "start_temperature", options.start_temperature);
    options.min_temperature = get_non_negative(view, "min_temperature", options.min_temperature);
    options.cooling = get_probability(view, "cooling", options.cooling);
    options.mutation = parse_mutation(view);
    spec.options = options;
  } else if (spec.type == "measured_evolution") {
    view.expect_keys({"type", "parents", "mutation_probability", "mutation"});
    MeasuredEvolutionOptions options;
    options.parents = get_count(view, "parents", options.parents);
    options.mutation_probability = get_probability(view, "mutation_probability", options.mutation_probability);
    options.mutation = parse_mutation(view);
    spec.options = options;
  } else if (spec.type == "autoscheduler_sampling") {
    spec.options = parse_autoscheduler_sampling(view);
  } else {
    view.at("type").fail("one of \"random\", \"exhaustive\", \"annealing\", \"evolution\", \"measured_annealing\", "
                         "\"measured_evolution\", \"autoscheduler_sampling\", found \"" + spec.type + "\"");
  }
  return spec;
}

std::unique_ptr<Strategy> make_strategy(const StrategySpec& spec, const RerankerLoader& load_reranker) {
  struct Maker {
    std::unique_ptr<Strategy> operator()(const RandomOptions&) const { return std::make_unique<RandomSearch>(); }
    std::unique_ptr<Strategy> operator()(const ExhaustiveOptions& o) const { return std::make_unique<ExhaustiveSearch>(o); }
    std::unique_ptr<Strategy> operator()(const AnnealingOptions& o) const { return std::make_unique<SimulatedAnnealing>(o); }
    std::unique_ptr<Strategy> operator()(const EvolutionOptions& o) const { return std::make_unique<EvolutionarySearch>(o); }
    std::unique_ptr<Strategy> operator()(const MeasuredAnnealingOptions& o) const { return std::make_unique<MeasuredAnnealing>(o); }
    std::unique_ptr<Strategy> operator()(const MeasuredEvolutionOptions& o) const { return std::make_unique<MeasuredEvolution>(o); }
    std::unique_ptr<Strategy> operator()(const AutoschedulerSamplingOptions&) const {
      throw std::invalid_argument("autoscheduler_sampling proposes no configs: the campaign runner samples the autoscheduler itself");
    }
  };
  std::unique_ptr<Strategy> strategy = std::visit(Maker{}, spec.options);
  if (!spec.anchored) return strategy;
  AnchoredOptions anchored = *spec.anchored;
  if (!spec.rerank_checkpoint.empty()) {
    if (!load_reranker) throw std::invalid_argument("this strategy re-ranks with " + spec.rerank_checkpoint + ", but nothing here loads models");
    anchored.reranker = load_reranker(spec.rerank_checkpoint);
  }
  return std::make_unique<AnchoredSearch>(std::move(strategy), anchored);
}

}  // namespace perftune
