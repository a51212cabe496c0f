#include "autotuner/factories/strategy_factory.h"

#include <sstream>

#include "ir/settings_table.h"
#include "search/random_search.h"

namespace perftune {

namespace {

const SettingsTable<MutationWeights>& mutation_settings() {
  static const auto table =
      SettingsTable<MutationWeights>()
          .non_negative("random_value", &MutationWeights::random_value, "weight of: one knob to a different random value of its domain")
          .non_negative("neighbour_step", &MutationWeights::neighbour_step, "weight of: one knob one step up or down its sorted domain")
          .non_negative("several_knobs", &MutationWeights::several_knobs, "weight of: 2 to 4 knobs to random values")
          .check([](const JsonView& view, const MutationWeights& w) {
            if (!(w.random_value + w.neighbour_step + w.several_knobs > 0)) view.fail("mutation weights with a positive sum");
          });
  return table;
}

// The anchored part of annealing and evolution: AnchoredOptions plus the re-ranker's checkpoint
// (as written; the campaign resolves it against its file and loads it).
struct AnchoredSettings : AnchoredOptions {
  std::string rerank_checkpoint;
};

const SettingsTable<AnchoredSettings>& anchored_settings() {
  static const auto table =
      SettingsTable<AnchoredSettings>()
          .probability("share", &AnchoredSettings::share, "share of each round's proposals from near the anchors")
          .count<std::size_t>("depth", &AnchoredSettings::depth, "one-knob steps from an anchor")
          .count<std::size_t>("beam", &AnchoredSettings::beam, "configs expanded per step")
          .count<std::size_t>("measured_anchors", &AnchoredSettings::measured_anchors,
                              "best measured configs that join the campaign's first configs as anchors", true)
          .count<std::size_t>("diversity_pool", &AnchoredSettings::diversity_pool,
                              "each part picked for knob coverage from this many times as many of its best (1: the best)")
          .custom("rerank", "{\"checkpoint\": MODEL, \"pool\": integer >= 2}", "none",
                  "each part the best of `pool` (default 8) times as many by a second, slower model",
                  [](const JsonView& v, AnchoredSettings& s) {
                    v.expect_keys({"checkpoint", "pool"});
                    s.rerank_pool = 8;
                    if (const auto pool = v.find("pool")) s.rerank_pool = static_cast<std::size_t>(pool->as_positive_int());
                    if (s.rerank_pool < 2) v.at("pool").fail("a pool of 2 or more times the picks");
                    s.rerank_checkpoint = v.at("checkpoint").as_string();
                  });
  return table;
}

const SettingsTable<RandomOptions>& random_settings() {
  static const SettingsTable<RandomOptions> table;
  return table;
}

const SettingsTable<ExhaustiveOptions>& exhaustive_settings() {
  static const auto table = SettingsTable<ExhaustiveOptions>().count(
      "max_configs", &ExhaustiveOptions::max_configs, "enumeration limit: a larger space is refused");
  return table;
}

const SettingsTable<AnnealingOptions>& annealing_settings() {
  static const auto table =
      SettingsTable<AnnealingOptions>()
          .count("chains", &AnnealingOptions::chains, "parallel chains on the cost model (AutoTVM's parallel_size)")
          .count("steps", &AnnealingOptions::steps, "steps per round (AutoTVM's n_iter)")
          .count("early_stop", &AnnealingOptions::early_stop, "stop when the kept best set is unchanged this many steps")
          .non_negative("start_temperature", &AnnealingOptions::start_temperature, "in units of the chains' score spread")
          .non_negative("end_temperature", &AnnealingOptions::end_temperature, "temperature at the last step")
          .count("restart_after", &AnnealingOptions::restart_after, "steps without an accepted move before a chain restarts")
          .nested("mutation", &AnnealingOptions::mutation, mutation_settings(), "mutation rule weights (below)")
          .count("warmup", &AnnealingOptions::warmup, "random proposals until this many measurements", true);
  return table;
}

const SettingsTable<EvolutionOptions>& evolution_settings() {
  static const auto table =
      SettingsTable<EvolutionOptions>()
          .count("population", &EvolutionOptions::population, "configs per generation (Ansor's default)")
          .count("generations", &EvolutionOptions::generations, "generations per round (Ansor's default)")
          .probability("mutation_probability", &EvolutionOptions::mutation_probability, "a child is mutated, else crossed over")
          .probability("measured_share", &EvolutionOptions::measured_share, "share of the first population from the best measured")
          .nested("mutation", &EvolutionOptions::mutation, mutation_settings(), "mutation rule weights (below)")
          .count("warmup", &EvolutionOptions::warmup, "random proposals until this many measurements", true);
  return table;
}

const SettingsTable<MeasuredAnnealingOptions>& measured_annealing_settings() {
  static const auto table =
      SettingsTable<MeasuredAnnealingOptions>()
          .count("chains", &MeasuredAnnealingOptions::chains, "chains on measurements (0: one per config the first round asks for)", true)
          .non_negative("start_temperature", &MeasuredAnnealingOptions::start_temperature, "in units of the relative runtime change")
          .non_negative("min_temperature", &MeasuredAnnealingOptions::min_temperature, "the temperature stops cooling here")
          .probability("cooling", &MeasuredAnnealingOptions::cooling, "temperature factor per chain step")
          .nested("mutation", &MeasuredAnnealingOptions::mutation, mutation_settings(), "mutation rule weights (below)");
  return table;
}

const SettingsTable<MeasuredEvolutionOptions>& measured_evolution_settings() {
  static const auto table =
      SettingsTable<MeasuredEvolutionOptions>()
          .count("parents", &MeasuredEvolutionOptions::parents, "best measured configs that breed (Kernel Tuner's popsize)")
          .probability("mutation_probability", &MeasuredEvolutionOptions::mutation_probability, "a child is mutated, else crossed over")
          .nested("mutation", &MeasuredEvolutionOptions::mutation, mutation_settings(), "mutation rule weights (below)");
  return table;
}

// One strategy type: its summary, how its object is read into a spec, and its settings' docs.
struct StrategyKind {
  const char* type;
  const char* summary;
  bool anchored;  // takes "anchored"
  std::function<void(const JsonView&, StrategySpec&, const std::vector<std::string>&)> read;
  std::function<std::string()> markdown;
};

template <class Options>
StrategyKind kind(const char* type, const char* summary, bool anchored, const SettingsTable<Options>& table) {
  return {type, summary, anchored,
          [&table](const JsonView& view, StrategySpec& spec, const std::vector<std::string>& also) {
            Options options;
            table.read(view, options, also);
            spec.options = options;
          },
          [&table] { return table.markdown(); }};
}

const std::vector<StrategyKind>& strategy_kinds() {
  static const std::vector<StrategyKind> kinds = {
      kind("random", "Uniform random configs, never one measured before", false, random_settings()),
      kind("exhaustive", "Every config of the space, ranked by the model", false, exhaustive_settings()),
      kind("annealing", "Simulated annealing on the cost model (AutoTVM's)", true, annealing_settings()),
      kind("evolution", "Evolutionary search on the cost model (Ansor's)", true, evolution_settings()),
      kind("measured_annealing", "Simulated annealing on measurements alone, no model (Kernel Tuner's)", false, measured_annealing_settings()),
      kind("measured_evolution", "A genetic algorithm on measurements alone, no model (Kernel Tuner's)", false, measured_evolution_settings()),
  };
  return kinds;
}

}  // namespace

StrategySpec parse_strategy_spec(const JsonView& view) {
  StrategySpec spec;
  spec.type = view.at("type").as_string();
  if (spec.type == "autoscheduler_sampling") {
    spec.options = parse_autoscheduler_sampling(view);
    return spec;
  }
  for (const StrategyKind& kind : strategy_kinds()) {
    if (spec.type != kind.type) continue;
    std::vector<std::string> also = {"type"};
    if (kind.anchored) also.push_back("anchored");
    kind.read(view, spec, also);
    if (const auto anchored = kind.anchored ? view.find("anchored") : std::nullopt) {
      AnchoredSettings settings;
      anchored_settings().read(*anchored, settings);
      spec.anchored = static_cast<const AnchoredOptions&>(settings);
      spec.rerank_checkpoint = settings.rerank_checkpoint;
    }
    return spec;
  }
  std::string names;
  for (const StrategyKind& kind : strategy_kinds()) names += std::string(names.empty() ? "" : ", ") + "\"" + kind.type + "\"";
  view.at("type").fail("one of " + names + ", \"autoscheduler_sampling\", found \"" + spec.type + "\"");
}

std::string strategy_settings_markdown() {
  std::ostringstream out;
  out << "## Strategies (`\"strategy\": {\"type\": TYPE, ...}`)\n\n";
  for (const StrategyKind& kind : strategy_kinds()) {
    out << "### `" << kind.type << "`\n\n" << kind.summary << ".\n\n";
    const std::string table = kind.markdown();
    if (table.find("\n| `") == std::string::npos) out << "No settings.\n\n";
    else out << table << "\n";
    if (kind.anchored) out << "With `\"anchored\": {...}`, see below.\n\n";
  }
  out << "### `anchored` (inside `annealing` or `evolution`)\n\n"
      << "A share of each round's proposals from the model's best configs near the campaign's first configs and the best measured.\n\n"
      << anchored_settings().markdown() << "\n";
  out << "### `mutation` (inside the four strategies that mutate configs)\n\n" << mutation_settings().markdown() << "\n";
  out << "### `autoscheduler_sampling`\n\n"
      << "A peer, not a strategy over the space: Halide's Adams2019 sampled (autotuner/autoscheduler_sampling.h).\n";
  return out.str();
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
