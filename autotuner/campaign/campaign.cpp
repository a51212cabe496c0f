#include "autotuner/campaign/campaign.h"

#include <filesystem>
#include <stdexcept>

#include "ir/count_limits.h"
#include "ir/data_path.h"

namespace perftune {

Campaign load_campaign(const std::string& path) { return parse_campaign(parse_json_file(path), path); }

Campaign parse_campaign(const nlohmann::json& json, const std::string& file) {
  const JsonView root(json, file);
  root.expect_keys({"name", "description", "source", "backend", "model", "strategy", "budget", "top_k", "ramp_batches",
                    "epsilon", "early_stopping", "seed", "timeout_retries", "confirm_best", "confirm_close_best", "search_time_share",
                    "output", "default", "allocation"});
  const std::string base_dir = std::filesystem::path(file).parent_path().string();
  auto resolve = [&](const std::string& value) { return resolve_config_path(value, base_dir.empty() ? "." : base_dir); };

  Campaign campaign;
  campaign.file = file;
  campaign.name = root.has("name") ? root.at("name").as_string() : std::filesystem::path(file).stem().string();

  const JsonView source = root.at("source");
  source.expect_keys({"path", "program", "network", "kernel", "device"});
  if (int{source.has("path")} + int{source.has("program")} + int{source.has("network")} != 1)
    source.fail("exactly one of \"path\" (a recorded source), \"program\" (a program JSON) and \"network\" (an ONNX model or a program JSON, every kernel tuned)");
  if (source.has("path")) campaign.source.path = resolve(source.at("path").as_string());
  if (source.has("program")) campaign.source.program = resolve(source.at("program").as_string());
  if (source.has("network")) {
    campaign.source.network = resolve(source.at("network").as_string());
    if (source.has("kernel")) source.at("kernel").fail("no kernel: a network source tunes every kernel of the network");
  }
  campaign.source.kernel = source.get_string("kernel", "");
  campaign.source.device = source.get_string("device", "");

  campaign.backend = parse_backend_spec(root.at("backend"));
  campaign.model = root.has("model") ? parse_model_spec(root.at("model"), resolve) : ModelSpec{"none", "", file, "$.model"};
  if (campaign.model.shipped && campaign.backend.type != "cpu")
    root.at("model").fail("a \"checkpoint\" or \"params\": the shipped model (" + campaign.model.checkpoint +
                          ") is trained on Halide kernels of a CPU, for a \"cpu\" backend, and this one is \"" +
                          campaign.backend.type + "\"");
  campaign.strategy = parse_strategy_spec(root.at("strategy"));
  if (!campaign.strategy.rerank_checkpoint.empty()) campaign.strategy.rerank_checkpoint = resolve(campaign.strategy.rerank_checkpoint);

  const JsonView budget = root.at("budget");
  budget.expect_keys({"measurements", "hardware_seconds", "minutes"});
  if (const auto v = budget.find("measurements")) campaign.max_measurements = static_cast<std::size_t>(bounded_count(*v, 1, kMaxMeasurementBudget, "measurements"));
  if (const auto v = budget.find("hardware_seconds")) {
    campaign.max_hardware_seconds = v->as_non_negative_number();
    if (!(campaign.max_hardware_seconds > 0)) v->fail("a positive number of seconds");
  }
  if (const auto v = budget.find("minutes")) {
    if (campaign.source.network.empty()) v->fail("no \"minutes\": a tuning-time budget is for a network source; use \"hardware_seconds\"");
    campaign.max_tuning_seconds = 60 * v->as_non_negative_number();
    if (!(campaign.max_tuning_seconds > 0)) v->fail("a positive number of minutes");
  }
  if (campaign.max_measurements == 0 && campaign.max_hardware_seconds == 0 && campaign.max_tuning_seconds == 0)
    budget.fail(campaign.source.network.empty() ? "a positive \"measurements\" and/or \"hardware_seconds\""
                                                : "a positive \"measurements\", \"hardware_seconds\" and/or \"minutes\"");
  if (const auto v = root.find("allocation")) {
    if (campaign.source.network.empty()) v->fail("no \"allocation\": it shares a network's budget among its kernels");
    try {
      campaign.allocation = parse_allocation(v->as_string());
    } catch (const std::invalid_argument&) {
      v->fail("\"gradient\" (Ansor's task scheduler) or \"equal\" (round robin)");
    }
  }

  if (const auto v = root.find("top_k")) campaign.top_k = static_cast<std::size_t>(v->as_positive_int());
  if (const auto v = root.find("ramp_batches")) campaign.ramp_batches = v->as_bool();
  if (const auto v = root.find("epsilon")) {
    campaign.epsilon = v->as_number();
    if (campaign.epsilon < 0 || campaign.epsilon > 1) v->fail("a share in [0, 1]");
  }
  if (const auto v = root.find("early_stopping")) campaign.early_stopping = static_cast<std::size_t>(v->as_positive_int());
  if (const auto v = root.find("seed")) campaign.seed = v->as_count();
  if (const auto v = root.find("timeout_retries")) campaign.timeout_retries = static_cast<std::size_t>(v->as_count());
  if (root.has("confirm_best")) campaign.confirm_best = root.get_bool("confirm_best", true);
  if (const auto v = root.find("confirm_close_best")) {
    campaign.confirm_close_best = v->as_number();
    if (!(campaign.confirm_close_best >= 0 && campaign.confirm_close_best < 1))
      v->fail("a margin in [0, 1) (0.1: a new best less than 10% faster than the best so far is re-measured)");
  }
  if (const auto v = root.find("search_time_share")) {
    const double share = v->as_number();
    if (!(share > 0 && share <= 1)) v->fail("a share of the wall time in (0, 1] (1: no limit)");
    campaign.search_time_share = share;
  }
  campaign.output = root.has("output") ? resolve(root.at("output").as_string()) : "perftune_runs/" + campaign.name;
  if (const auto v = root.find("default")) {
    if (!v->is_object()) v->fail("an object of knob values");
    campaign.default_config = v->value();
  }
  return campaign;
}

TunerOptions campaign_tuner_options(const Campaign& campaign) {
  TunerOptions options;
  options.max_measurements = campaign.max_measurements;
  options.max_hardware_seconds = campaign.max_hardware_seconds;
  options.top_k = campaign.top_k;
  options.ramp_batches = campaign.ramp_batches;
  options.epsilon = campaign.epsilon;
  options.early_stopping = campaign.early_stopping;
  options.seed = campaign.seed;
  const bool plain_replay = campaign.backend.type == "replay" && !campaign.backend.faults;
  options.timeout_retries = campaign.timeout_retries.value_or(plain_replay ? 0 : TunerOptions{}.timeout_retries);
  options.confirm_best = campaign.confirm_best.value_or(!plain_replay);
  options.confirm_close_best = campaign.confirm_close_best;
  options.search_time_share = campaign.search_time_share.value_or(campaign.backend.type == "replay" ? 0.0 : kDefaultSearchTimeShare);
  return options;
}

}  // namespace perftune
