#include "autotuner/model_picks.h"

#include <algorithm>
#include <filesystem>
#include <memory>

#include "autotuner/factories/model_factory.h"
#include "ir/data_path.h"
#include "search/history.h"

namespace perftune {

ModelPicksSpec parse_model_picks(const CollectSpec& spec) {
  const JsonView section(spec.model_picks, spec.source, "$.model_picks");
  section.expect_keys({"per_kernel", "model", "strategy", "seed", "comment"});
  const std::string folder = std::filesystem::path(spec.source).parent_path().string();
  const auto resolve = [&](const std::string& value) { return resolve_config_path(value, folder.empty() ? "." : folder); };
  ModelPicksSpec picks;
  picks.per_kernel = static_cast<std::size_t>(section.at("per_kernel").as_positive_int());
  picks.model = parse_model_spec(section.at("model"), resolve);
  if (picks.model.type == "none") section.at("model").fail("a model to pick with (\"none\" picks nothing)");
  picks.strategy = parse_strategy_spec(section.at("strategy"));
  if (!picks.strategy.rerank_checkpoint.empty()) picks.strategy.rerank_checkpoint = resolve(picks.strategy.rerank_checkpoint);
  if (picks.strategy.type == "autoscheduler_sampling") section.at("strategy").at("type").fail("a strategy over the space (not a peer)");
  picks.seed = static_cast<std::uint64_t>(section.get_int("seed", 1));
  return picks;
}

ProposeConfigs make_model_picker(const ModelPicksSpec& spec) {
  std::shared_ptr<CostModel> model = make_model(spec.model);
  return [model, strategy_spec = spec.strategy, seed = spec.seed](const Kernel& kernel, const SearchSpace& space,
                                                                  std::span<const Config> anchors, std::size_t n) {
    // A strategy of its own per kernel, as each campaign has: strategies keep state between rounds.
    const std::unique_ptr<Strategy> strategy = make_strategy(strategy_spec, load_reranker);
    const History nothing_measured;
    const SearchContext context{kernel, space, model.get(), nothing_measured, seed, 0, {}, anchors};
    // As the tuner's first round: the strategy's proposals, ranked by the model.
    std::vector<Config> picks;
    for (Config& config : rank_by_model(*model, kernel, space, strategy->propose(context, n + anchors.size()))) {
      if (picks.size() == n) break;
      if (std::find(anchors.begin(), anchors.end(), config) == anchors.end()) picks.push_back(std::move(config));
    }
    return picks;
  };
}

}  // namespace perftune
