#include "autotuner/campaign_runner.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <ostream>
#include <sstream>

#include "autotuner/tuner.h"
#include "ir/input_error.h"
#include "ir/record_log.h"
#include "ir/source.h"

namespace perftune {

namespace {

nlohmann::ordered_json optional_number(const std::optional<double>& value) {
  return value ? nlohmann::ordered_json(*value) : nlohmann::ordered_json(nullptr);
}

std::string format_seconds(double seconds) {
  std::ostringstream out;
  out << std::setprecision(4);
  if (seconds >= 1) out << seconds << " s";
  else if (seconds >= 1e-3) out << seconds * 1e3 << " ms";
  else out << seconds * 1e6 << " us";
  return out.str();
}

std::optional<Config> default_config(const Campaign& campaign, const MeasuredKernel& measured) {
  if (campaign.default_config) {
    Config config;
    try {
      config = measured.space->from_json(*campaign.default_config);
    } catch (const std::invalid_argument& error) {
      throw InputError(campaign.file, "$.default", std::string("a config of the kernel's knobs: ") + error.what());
    }
    if (!measured.space->contains(config))
      throw InputError(campaign.file, "$.default", "a config inside the kernel's space; " + config.to_string() + " is not");
    return config;
  }
  if (measured.default_index) return measured.measurements[*measured.default_index].config;
  return std::nullopt;
}

void write_file_atomically(const std::string& path, const std::string& text) {
  const std::string temporary = path + ".tmp";
  {
    std::ofstream out(temporary, std::ios::trunc);
    out << text << "\n";
    if (!out) throw std::runtime_error("cannot write " + temporary);
  }
  std::filesystem::rename(temporary, path);
}

}  // namespace

const MeasuredKernel& campaign_kernel(const Corpus& corpus, const Campaign& campaign) {
  std::vector<const MeasuredKernel*> matches;
  std::string available;
  for (const MeasuredKernel& measured : corpus.kernels) {
    available += (available.empty() ? "" : ", ") + measured.kernel.name() + " (" + measured.kernel.key() + ") on '" +
                 measured.device + "'";
    const bool kernel_ok = campaign.source.kernel.empty() || measured.kernel.name() == campaign.source.kernel ||
                           measured.kernel.key() == campaign.source.kernel;
    const bool device_ok = campaign.source.device.empty() || measured.device == campaign.source.device;
    if (kernel_ok && device_ok) matches.push_back(&measured);
  }
  if (matches.size() == 1) return *matches.front();
  const std::string place = campaign.source.kernel.empty() ? "$.source" : "$.source.kernel";
  if (matches.empty())
    throw InputError(campaign.file, place, "a kernel and device measured in " + campaign.source.path +
                                               (available.empty() ? " (it has no measured kernels)" : "; it has: " + available));
  throw InputError(campaign.file, place, "one kernel: " + std::to_string(matches.size()) + " in " + campaign.source.path +
                                             " match; name one with \"kernel\" and \"device\" (it has: " + available + ")");
}

namespace {

void require_recorded_source(const Campaign& campaign) {
  if (!campaign.source.program.empty())
    throw InputError(campaign.file, "$.source.program",
                     "a recorded source (\"path\"): program sources need the CPU tile and fusion spaces, which are "
                     "not available in this build");
}

}  // namespace

nlohmann::ordered_json run_campaign(const Campaign& campaign, const CampaignRunOptions& options) {
  require_recorded_source(campaign);
  const auto load_start = std::chrono::steady_clock::now();
  const Corpus corpus = load_source(campaign.source.path);
  const double load_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - load_start).count();
  nlohmann::ordered_json summary = run_campaign(campaign, corpus, options);
  summary["load_seconds"] = load_seconds;
  write_file_atomically((std::filesystem::path(summary["records"].get<std::string>()).parent_path() / "summary.json").string(),
                        summary.dump(2));
  return summary;
}

nlohmann::ordered_json run_campaign(const Campaign& campaign, const Corpus& corpus, const CampaignRunOptions& options) {
  require_recorded_source(campaign);
  const double load_seconds = 0.0;
  const MeasuredKernel& measured = campaign_kernel(corpus, campaign);
  const Kernel& kernel = measured.kernel;
  const SearchSpace& space = *measured.space;

  std::unique_ptr<Backend> backend = make_backend(campaign.backend, corpus, measured.device);
  std::unique_ptr<CostModel> model = make_model(campaign.model);
  std::unique_ptr<Strategy> strategy = make_strategy(campaign.strategy);

  // The default's runtime: from the recording when replaying it (free), else measured first.
  const std::optional<Config> default_cfg = default_config(campaign, measured);
  std::optional<double> default_seconds;
  std::optional<double> optimum_seconds;
  TunerOptions tuner_options;
  if (campaign.backend.type == "replay") {
    for (const Measurement& m : measured.measurements) {
      if (!m.result.ok()) continue;
      if (default_cfg && m.config == *default_cfg && !default_seconds) default_seconds = m.result.seconds;
      optimum_seconds = std::min(optimum_seconds.value_or(INFINITY), m.result.seconds);
    }
  } else if (default_cfg) {
    tuner_options.measure_first.push_back(*default_cfg);
  }
  tuner_options.max_measurements = campaign.max_measurements;
  tuner_options.max_hardware_seconds = campaign.max_hardware_seconds;
  tuner_options.top_k = campaign.top_k;
  tuner_options.epsilon = campaign.epsilon;
  tuner_options.early_stopping = campaign.early_stopping;
  tuner_options.seed = campaign.seed;

  const std::string output = options.output.empty() ? campaign.output : options.output;
  std::filesystem::create_directories(output);
  const std::string records_path = (std::filesystem::path(output) / "records.jsonl").string();
  std::vector<Record> logged;
  if (std::filesystem::exists(records_path)) {
    LoadedLog loaded = RecordLog::load(records_path);
    if (options.progress)
      for (const std::string& warning : loaded.warnings) *options.progress << "[tune] " << warning << "\n";
    logged = std::move(loaded.records);
  }
  RecordLog log(records_path);

  std::string budget_text;
  if (campaign.max_measurements) budget_text.append("/").append(std::to_string(campaign.max_measurements));
  auto progress = [&](const RoundReport& report) {
    if (!options.progress) return;
    std::ostream& out = *options.progress;
    out << "[tune] round " << report.round + 1 << "  measured " << report.measured << budget_text << "  hardware "
        << format_seconds(report.hardware_seconds);
    if (campaign.max_hardware_seconds > 0) out << "/" << format_seconds(campaign.max_hardware_seconds);
    if (report.best_seconds) {
      out << "  best " << format_seconds(*report.best_seconds);
      if (default_seconds) out << "  speedup " << std::setprecision(3) << *default_seconds / *report.best_seconds << "x over default";
    } else {
      out << "  best none yet";
    }
    if (report.failed) out << "  (" << report.failed << " failed)";
    out << std::endl;
  };
  Tuner tuner(*backend, *strategy, model.get(), &log, tuner_options);
  const TuneResult result = tuner.run(kernel, space, logged, progress);

  if (default_cfg && !default_seconds)
    if (const MeasureResult* measured_default = result.history.find(*default_cfg); measured_default && measured_default->ok())
      default_seconds = measured_default->seconds;

  nlohmann::ordered_json summary;
  summary["campaign"] = campaign.name;
  summary["campaign_file"] = campaign.file;
  summary["kernel"] = kernel.name();
  summary["kernel_key"] = kernel.key();
  summary["device"] = backend->fingerprint();
  summary["strategy"] = strategy->name();
  summary["model"] = campaign.model.type;
  summary["seed"] = campaign.seed;
  const auto best = result.history.best();
  summary["best_config"] = best ? space.to_json(result.history.entries()[*best].config) : nlohmann::ordered_json(nullptr);
  const std::optional<double> best_seconds =
      best ? std::optional<double>(result.history.entries()[*best].result.seconds) : std::nullopt;
  summary["best_seconds"] = optional_number(best_seconds);
  summary["default_config"] = default_cfg ? space.to_json(*default_cfg) : nlohmann::ordered_json(nullptr);
  summary["default_seconds"] = optional_number(default_seconds);
  summary["speedup_over_default"] =
      optional_number(best_seconds && default_seconds ? std::optional<double>(*default_seconds / *best_seconds) : std::nullopt);
  summary["optimum_seconds"] = optional_number(optimum_seconds);
  summary["measurements"] = result.history.size();
  summary["failed"] = result.failed;
  summary["from_log"] = result.from_log;
  summary["rounds"] = result.rounds;
  summary["hardware_seconds"] = result.hardware_seconds;
  summary["wall_seconds"] = result.wall_seconds;
  summary["search_seconds"] = std::max(0.0, result.wall_seconds - result.backend_wall_seconds);
  summary["load_seconds"] = load_seconds;
  summary["stop_reason"] = std::string(stop_reason_name(result.stop));
  nlohmann::ordered_json best_after = nlohmann::ordered_json::array();
  for (const auto& value : result.best_after) best_after.push_back(optional_number(value));
  summary["best_after"] = std::move(best_after);
  nlohmann::ordered_json hardware_after = nlohmann::ordered_json::array();
  double charged = 0.0;
  for (const Measurement& entry : result.history.entries()) hardware_after.push_back(charged += entry.result.cost_seconds);
  summary["hardware_after"] = std::move(hardware_after);
  summary["records"] = records_path;
  write_file_atomically((std::filesystem::path(output) / "summary.json").string(), summary.dump(2));
  return summary;
}

}  // namespace perftune
