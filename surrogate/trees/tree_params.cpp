#include "surrogate/trees/tree_params.h"

#include <climits>

#include "surrogate/json_fields.h"

namespace perftune {

nlohmann::ordered_json TreeParams::to_json() const {
  nlohmann::ordered_json json{{"objective", objective}, {"rounds", rounds},       {"eta", eta},
                              {"max_depth", max_depth}, {"subsample", subsample}, {"colsample", colsample},
                              {"min_opcode_count", min_opcode_count}, {"seed", seed}, {"threads", threads},
                              {"online_rounds", online_rounds}, {"online_depth", online_depth}};
  if (analytical_device) json["analytical_device"] = device_spec_to_json(*analytical_device);
  if (!schedule_features.empty()) json["schedule_features"] = schedule_features;
  if (max_configs_per_kernel > 0) json["max_configs_per_kernel"] = max_configs_per_kernel;
  return json;
}

TreeParams TreeParams::from_json(const JsonView& json) {
  json.expect_keys({"objective", "rounds", "eta", "max_depth", "subsample", "colsample", "min_opcode_count", "seed",
                    "threads", "online_rounds", "online_depth", "analytical_device", "schedule_features",
                    "max_configs_per_kernel", "comment"});
  TreeParams p;
  if (auto v = json.find("objective")) {
    p.objective = v->as_string();
    if (p.objective != "rank:pairwise" && p.objective != "reg:squarederror")
      v->fail("\"rank:pairwise\" or \"reg:squarederror\"");
  }
  read_bounded_ints(json, {{"rounds", &p.rounds, kMaxTreeRounds}, {"max_depth", &p.max_depth, kMaxTreeDepth},
                           {"min_opcode_count", &p.min_opcode_count, INT_MAX}, {"online_depth", &p.online_depth, kMaxTreeDepth}});
  auto share = [&](const char* key, double& into) {
    if (auto v = json.find(key)) {
      into = v->as_non_negative_number();
      if (into <= 0 || into > 1) v->fail("a number in (0, 1]");
    }
  };
  share("eta", p.eta);
  share("subsample", p.subsample);
  share("colsample", p.colsample);
  if (auto v = json.find("seed")) p.seed = read_bounded_count(*v, INT_MAX, "a seed >= 0");
  if (auto v = json.find("threads")) p.threads = read_bounded_count(*v, kMaxTreeThreads, "a thread count >= 0 (0: one per core)");
  if (auto v = json.find("online_rounds")) p.online_rounds = read_bounded_count(*v, kMaxOnlineRounds, "a count >= 0 of trees");
  if (auto v = json.find("analytical_device")) p.analytical_device = device_spec_from_json(*v);
  if (auto v = json.find("schedule_features")) p.schedule_features = v->as_string();
  if (auto v = json.find("max_configs_per_kernel"))
    p.max_configs_per_kernel = read_bounded_count(*v, INT_MAX, "a count >= 0 of configs (0: all)");
  return p;
}

TreeParams TreeParams::load(const std::string& path) {
  const nlohmann::json json = parse_json_file(path);
  return from_json(JsonView(json, path));
}

}  // namespace perftune
