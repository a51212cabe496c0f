#include "autotuner/campaign/campaign_summary.h"

#include "autotuner/summary_fields.h"
#include "ir/json_view.h"

namespace perftune {

namespace {

using ordered_json = nlohmann::ordered_json;

template <typename Count>
ordered_json counts_json(const std::map<std::string, Count>& counts) {
  ordered_json json = ordered_json::object();
  for (const auto& [name, count] : counts) json[name] = count;
  return json;
}

ordered_json default_json(const SummaryDefault& entry) {
  ordered_json json;
  if (entry.config) {
    json["config"] = *entry.config;
  } else {
    json["kind"] = entry.kind;
    json["settings"] = entry.settings;
    json["status"] = entry.status;
  }
  json["seconds"] = optional_number(entry.seconds);
  json["speedup"] = optional_number(entry.speedup);
  if (entry.message) json["message"] = *entry.message;
  return json;
}

ordered_json outside_json(const OutsideBackend& outside) {
  ordered_json json;
  json["propose_seconds"] = outside.propose_seconds;
  json["rank_seconds"] = outside.rank_seconds;
  json["update_seconds"] = outside.update_seconds;
  json["record_seconds"] = outside.record_seconds;
  json["other_seconds"] = outside.other_seconds;
  if (outside.model) {
    json["model_predict_seconds"] = outside.model->predict_seconds;
    json["model_cache_hits"] = outside.model->hits;
    json["model_cache_misses"] = outside.model->misses;
  }
  return json;
}

ordered_json best_after_json(const std::vector<std::optional<double>>& values) {
  ordered_json json = ordered_json::array();
  for (const auto& value : values) json.push_back(optional_number(value));
  return json;
}

std::optional<double> optional_number_at(const JsonView& object, std::string_view key) {
  const auto value = object.find(key);
  if (!value || value->value().is_null()) return std::nullopt;
  return value->as_number();
}

std::vector<double> numbers_at(const JsonView& object, std::string_view key) {
  std::vector<double> numbers;
  for (const JsonView& value : object.at(key).elements()) numbers.push_back(value.as_number());
  return numbers;
}

std::map<std::string, std::size_t> counts_at(const JsonView& object, std::string_view key) {
  std::map<std::string, std::size_t> counts;
  if (const auto found = object.find(key))
    for (const auto& [name, count] : found->value().items()) counts[name] = static_cast<std::size_t>(found->at(name).as_count());
  return counts;
}

std::size_t count_at(const JsonView& object, std::string_view key) {
  const auto value = object.find(key);
  return value ? static_cast<std::size_t>(value->as_count()) : 0;
}

TuningDetails tuning_from_json(const JsonView& json) {
  TuningDetails tuning;
  tuning.model = json.get_string("model", "");
  tuning.best_config = ordered_json::parse(json.value().value("best_config", nlohmann::json()).dump());
  tuning.default_config = ordered_json::parse(json.value().value("default_config", nlohmann::json()).dump());
  tuning.speedup_over_default = optional_number_at(json, "speedup_over_default");
  tuning.optimum_seconds = optional_number_at(json, "optimum_seconds");
  if (const auto defaults = json.find("defaults")) {
    tuning.defaults.emplace();
    for (const auto& [name, unused] : defaults->value().items()) {
      const JsonView entry = defaults->at(name);
      SummaryDefault read;
      read.name = name;
      if (entry.has("config")) read.config = ordered_json::parse(entry.at("config").value().dump());
      read.kind = entry.get_string("kind", "");
      read.status = entry.get_string("status", "");
      if (entry.has("settings")) read.settings = ordered_json::parse(entry.at("settings").value().dump());
      if (entry.has("message")) read.message = entry.at("message").as_string();
      read.seconds = optional_number_at(entry, "seconds");
      read.speedup = optional_number_at(entry, "speedup");
      tuning.defaults->push_back(std::move(read));
    }
  }
  tuning.failed_by_status = counts_at(json, "failed_by_status");
  tuning.quarantined = count_at(json, "quarantined");
  tuning.retries = count_at(json, "retries");
  tuning.confirmations = count_at(json, "confirmations");
  tuning.from_log = count_at(json, "from_log");
  tuning.rounds = count_at(json, "rounds");
  tuning.confirm_best = json.get_bool("confirm_best", false);
  tuning.confirm_close_best = json.get_number("confirm_close_best", 0.0);
  if (json.has("faults_injected")) tuning.faults_injected = counts_at(json, "faults_injected");
  tuning.search_seconds = json.get_number("search_seconds", 0.0);
  tuning.search_share = json.get_number("search_share", 0.0);
  tuning.search_time_share = optional_number_at(json, "search_time_share");
  if (const auto outside = json.find("outside_backend")) {
    OutsideBackend& read = tuning.outside_backend;
    read.propose_seconds = outside->get_number("propose_seconds", 0.0);
    read.rank_seconds = outside->get_number("rank_seconds", 0.0);
    read.update_seconds = outside->get_number("update_seconds", 0.0);
    read.record_seconds = outside->get_number("record_seconds", 0.0);
    read.other_seconds = outside->get_number("other_seconds", 0.0);
    if (outside->has("model_predict_seconds"))
      read.model = OutsideBackend::ModelCache{outside->at("model_predict_seconds").as_number(), count_at(*outside, "model_cache_hits"),
                                              count_at(*outside, "model_cache_misses")};
  }
  tuning.stop_reason = json.at("stop_reason").as_string();
  tuning.records = json.get_string("records", "");
  return tuning;
}

}  // namespace

ordered_json to_json(const CampaignSummary& summary) {
  ordered_json json;
  json["campaign"] = summary.campaign;
  json["campaign_file"] = summary.campaign_file;
  json["kernel"] = summary.kernel;
  json["kernel_key"] = summary.kernel_key;
  json["device"] = summary.device;
  json["strategy"] = summary.strategy;
  json["seed"] = summary.seed;
  if (!summary.tuning) {  // a peer's samples
    json["best_seconds"] = optional_number(summary.best_seconds);
    json["default_seconds"] = optional_number(summary.default_seconds);
    json["measurements"] = summary.measurements;
    json["failed"] = summary.failed;
    if (summary.distinct_schedules) json["distinct_schedules"] = *summary.distinct_schedules;
    json["hardware_seconds"] = summary.hardware_seconds;
    json["wall_seconds"] = summary.wall_seconds;
    json["load_seconds"] = summary.load_seconds;
    json["search_after"] = summary.search_after;
    json["best_after"] = best_after_json(summary.best_after);
    json["hardware_after"] = summary.hardware_after;
    return json;
  }
  const TuningDetails& tuning = *summary.tuning;
  json["model"] = tuning.model;
  json["best_config"] = tuning.best_config;
  json["best_seconds"] = optional_number(summary.best_seconds);
  json["default_config"] = tuning.default_config;
  json["default_seconds"] = optional_number(summary.default_seconds);
  json["speedup_over_default"] = optional_number(tuning.speedup_over_default);
  if (tuning.defaults) {
    ordered_json defaults = ordered_json::object();
    for (const SummaryDefault& entry : *tuning.defaults) defaults[entry.name] = default_json(entry);
    json["defaults"] = std::move(defaults);
  }
  json["optimum_seconds"] = optional_number(tuning.optimum_seconds);
  json["measurements"] = summary.measurements;
  json["failed"] = summary.failed;
  json["failed_by_status"] = counts_json(tuning.failed_by_status);
  json["quarantined"] = tuning.quarantined;
  json["retries"] = tuning.retries;
  json["confirm_best"] = tuning.confirm_best;
  json["confirm_close_best"] = tuning.confirm_close_best;
  json["confirmations"] = tuning.confirmations;
  if (tuning.faults_injected) json["faults_injected"] = counts_json(*tuning.faults_injected);
  json["from_log"] = tuning.from_log;
  json["rounds"] = tuning.rounds;
  json["hardware_seconds"] = summary.hardware_seconds;
  json["wall_seconds"] = summary.wall_seconds;
  json["search_seconds"] = tuning.search_seconds;
  json["search_share"] = tuning.search_share;
  json["search_time_share"] = optional_number(tuning.search_time_share);
  json["outside_backend"] = outside_json(tuning.outside_backend);
  json["stop_reason"] = tuning.stop_reason;
  json["best_after"] = best_after_json(summary.best_after);
  json["hardware_after"] = summary.hardware_after;
  json["search_after"] = summary.search_after;
  json["records"] = tuning.records;
  json["load_seconds"] = summary.load_seconds;
  return json;
}

CampaignSummary campaign_summary_from_json(const nlohmann::json& json, const std::string& file) {
  const JsonView root(json, file);
  CampaignSummary summary;
  summary.campaign = root.at("campaign").as_string();
  summary.campaign_file = root.get_string("campaign_file", "");
  summary.kernel = root.at("kernel").as_string();
  summary.kernel_key = root.get_string("kernel_key", "");
  summary.device = root.at("device").as_string();
  summary.strategy = root.at("strategy").as_string();
  summary.seed = root.at("seed").as_count();
  summary.best_seconds = optional_number_at(root, "best_seconds");
  summary.default_seconds = optional_number_at(root, "default_seconds");
  summary.measurements = static_cast<std::size_t>(root.at("measurements").as_count());
  summary.failed = count_at(root, "failed");
  summary.hardware_seconds = root.get_number("hardware_seconds", 0.0);
  summary.wall_seconds = root.get_number("wall_seconds", 0.0);
  summary.load_seconds = root.get_number("load_seconds", 0.0);
  for (const JsonView& value : root.at("best_after").elements())
    summary.best_after.push_back(value.value().is_null() ? std::nullopt : std::optional<double>(value.as_number()));
  summary.hardware_after = numbers_at(root, "hardware_after");
  summary.search_after = numbers_at(root, "search_after");
  if (root.has("stop_reason")) summary.tuning = tuning_from_json(root);
  if (root.has("distinct_schedules")) summary.distinct_schedules = static_cast<std::size_t>(root.at("distinct_schedules").as_count());
  return summary;
}

}  // namespace perftune
