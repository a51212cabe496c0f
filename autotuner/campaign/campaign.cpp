#include "autotuner/campaign/campaign.h"

#include <filesystem>
#include <stdexcept>

#include "ir/count_limits.h"
#include "ir/data_path.h"

namespace perftune {

const SettingsTable<TunerOptions>& campaign_tuner_settings() {
  using O = TunerOptions;
  static const auto table =
      SettingsTable<O>()
          .custom("top_k", "integer >= 1", "min(64, max(1, measurements / 10))", "configs measured per round",
                  [](const JsonView& v, O& o) { o.top_k = static_cast<std::size_t>(v.as_positive_int()); })
          .flag("ramp_batches", &O::ramp_batches, "rounds measure 1, 2, 4, ... configs until top_k")
          .custom("epsilon", "[0, 1]", setting_number_text(O{}.epsilon), "share of each batch drawn at random (Ansor's eps_greedy)",
                  [](const JsonView& v, O& o) {
                    o.epsilon = v.as_number();
                    if (o.epsilon < 0 || o.epsilon > 1) v.fail("a share in [0, 1]");
                  })
          .custom("early_stopping", "integer >= 1", "never", "stop after this many measurements without a new best",
                  [](const JsonView& v, O& o) { o.early_stopping = static_cast<std::size_t>(v.as_positive_int()); })
          .custom("seed", "integer >= 0", "0", "the search's and the random share's seed",
                  [](const JsonView& v, O& o) { o.seed = v.as_count(); })
          .custom("timeout_retries", "integer >= 0", "2 (a plain replay: 0)", "retries of a timed-out measurement in its round",
                  [](const JsonView& v, O& o) { o.timeout_retries = static_cast<std::size_t>(v.as_count()); })
          .custom("confirm_best", "true or false", "true (a plain replay: false)",
                  "measure a suspicious would-be new best three times more and keep the median",
                  [](const JsonView& v, O& o) { o.confirm_best = v.as_bool(); })
          .custom("confirm_close_best", "[0, 1)", "0", "a new best less than this fraction faster than the best is confirmed too",
                  [](const JsonView& v, O& o) {
                    o.confirm_close_best = v.as_number();
                    if (!(o.confirm_close_best >= 0 && o.confirm_close_best < 1))
                      v.fail("a margin in [0, 1) (0.1: a new best less than 10% faster than the best so far is re-measured)");
                  })
          .custom("search_time_share", "(0, 1]", setting_number_text(kDefaultSearchTimeShare) + " (a replay: 1)",
                  "largest share of the wall time outside the hardware (1: no limit)", [](const JsonView& v, O& o) {
                    const double share = v.as_number();
                    if (!(share > 0 && share <= 1)) v.fail("a share of the wall time in (0, 1] (1: no limit)");
                    o.search_time_share = share;
                  });
  return table;
}

Campaign load_campaign(const std::string& path) { return parse_campaign(parse_json_file(path), path); }

Campaign parse_campaign(const nlohmann::json& json, const std::string& file) {
  const JsonView root(json, file);
  std::vector<std::string> keys = {"name", "description", "source", "backend", "model", "strategy", "budget", "output", "default", "allocation"};
  for (const std::string& key : campaign_tuner_settings().keys()) keys.push_back(key);
  root.expect_keys(keys);
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
  if (std::holds_alternative<AutoschedulerSamplingOptions>(campaign.strategy.options) && campaign.backend.type != "cpu")
    root.at("backend").at("type").fail("\"cpu\" (Halide) for strategy autoscheduler_sampling, which samples Halide's Adams2019");
  if (std::holds_alternative<AutoschedulerSamplingOptions>(campaign.strategy.options) && campaign.backend.faults)
    root.at("backend").at("faults").fail("no \"faults\" for strategy autoscheduler_sampling, which runs Halide's own schedules");
  if (!campaign.strategy.rerank_checkpoint.empty()) campaign.strategy.rerank_checkpoint = resolve(campaign.strategy.rerank_checkpoint);

  // The loop's defaults that follow the backend, before the campaign's own keys override them.
  TunerOptions& tuner = campaign.tuner;
  const BackendTraits traits = backend_traits(campaign.backend);
  if (traits.repeatable) tuner.timeout_retries = 0;
  tuner.confirm_best = !traits.repeatable;
  tuner.search_time_share = traits.recorded ? 0.0 : kDefaultSearchTimeShare;
  campaign_tuner_settings().read_members(root, tuner);
  tuner.batch_policy = batch_policy_options(campaign.model);

  const JsonView budget = root.at("budget");
  budget.expect_keys({"measurements", "hardware_seconds", "minutes"});
  if (const auto v = budget.find("measurements")) tuner.max_measurements = static_cast<std::size_t>(bounded_count(*v, 1, kMaxMeasurementBudget, "measurements"));
  if (const auto v = budget.find("hardware_seconds")) {
    tuner.max_hardware_seconds = v->as_non_negative_number();
    if (!(tuner.max_hardware_seconds > 0)) v->fail("a positive number of seconds");
  }
  if (const auto v = budget.find("minutes")) {
    if (campaign.source.network.empty()) v->fail("no \"minutes\": a tuning-time budget is for a network source; use \"hardware_seconds\"");
    campaign.max_tuning_seconds = 60 * v->as_non_negative_number();
    if (!(campaign.max_tuning_seconds > 0)) v->fail("a positive number of minutes");
  }
  if (tuner.max_measurements == 0 && tuner.max_hardware_seconds == 0 && campaign.max_tuning_seconds == 0)
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

  campaign.output = root.has("output") ? resolve(root.at("output").as_string()) : "perftune_runs/" + campaign.name;
  if (const auto v = root.find("default")) {
    if (!v->is_object()) v->fail("an object of knob values");
    campaign.default_config = v->value();
  }
  return campaign;
}

}  // namespace perftune
