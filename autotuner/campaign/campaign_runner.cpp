#include "autotuner/campaign/campaign_runner.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iomanip>
#include <ostream>
#include <set>
#include <sstream>

#include "autotuner/campaign/program_target.h"
#include "autotuner/resumed_records.h"
#include "autotuner/summary_fields.h"
#include "autotuner/tuner.h"
#include "hardware/wrappers/rank_spread_backend.h"
#include "ir/file_io.h"
#include "ir/input_error.h"
#include "ir/output_lock.h"
#include "ir/record_log.h"
#include "ir/source.h"
#include "search/cached_cost_model.h"

namespace perftune {

namespace {

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

// What every run's summary starts with: what ran, on what.
CampaignSummary summary_head(const Campaign& campaign, const Kernel& kernel, const std::string& device, const std::string& strategy) {
  CampaignSummary summary;
  summary.campaign = campaign.name;
  summary.campaign_file = campaign.file;
  summary.kernel = kernel.name();
  summary.kernel_key = kernel.key();
  summary.device = device;
  summary.strategy = strategy;
  summary.seed = campaign.tuner.seed;
  return summary;
}

CampaignSummary written(CampaignSummary summary, const std::string& output) {
  write_file_atomically((std::filesystem::path(output) / "summary.json").string(), to_json(summary).dump(2) + "\n");
  return summary;
}

// A peer at equal budget (autoscheduler_sampling.h): its samples in place of the tuning loop,
// summarized with the fields an experiment's curves read. The samples are not configs of the
// space, so they go to samples.jsonl beside the summary, not to the record log.
CampaignSummary sample_target(const Campaign& campaign, const MeasuredKernel& measured, const AutoschedulerSamplingOptions& sampling,
                                     double load_seconds, const CampaignRunOptions& options) {
  // parse_campaign holds this strategy to a "cpu" backend: the samples are Halide's own schedules.
  auto halide = std::make_unique<HalideBackend>(campaign.backend.cpu);
  const std::string output = options.output.empty() ? campaign.output : options.output;
  std::filesystem::create_directories(output);
  const auto start = std::chrono::steady_clock::now();
  std::ofstream samples((std::filesystem::path(output) / "samples.jsonl").string(), std::ios::trunc);
  std::vector<std::optional<double>> best_after;
  std::vector<double> hardware_after;
  std::optional<double> best;
  double hardware = 0;
  std::size_t failed = 0;
  const std::size_t budget = campaign.tuner.max_measurements ? campaign.tuner.max_measurements : sampling.batch;
  std::set<std::string> schedules;
  sample_autoscheduler(*halide, measured.kernel, sampling, campaign.tuner.seed, budget, [&](std::size_t i, const AutoscheduledMeasurement& sample) {
    const MeasureResult& r = sample.result;
    if (!sample.schedule.empty()) schedules.insert(sample.schedule);
    hardware += r.cost_seconds;
    if (r.ok()) best = std::min(best.value_or(INFINITY), r.seconds);
    else ++failed;
    best_after.push_back(best);
    hardware_after.push_back(hardware);
    const AutoschedulerRun run = autoscheduler_sample(sampling, campaign.tuner.seed, i);
    samples << nlohmann::ordered_json{{"sample", i}, {"env", run.env}, {"status", std::string(status_name(r.status))},
                                      {"seconds", optional_number(r.ok() ? std::optional<double>(r.seconds) : std::nullopt)},
                                      {"schedule", sample.schedule}, {"message", r.message}}.dump()
            << "\n" << std::flush;
    if (options.progress)
      *options.progress << "[tune] " << sampling.autoscheduler << " sample " << i + 1 << "/" << budget << "  best "
                        << (best ? format_seconds(*best) : std::string("none yet")) << std::endl;
  });
  CampaignSummary summary = summary_head(campaign, measured.kernel, halide->fingerprint(), sampling.autoscheduler + " sampling");
  summary.best_seconds = best;
  summary.measurements = budget;
  summary.failed = failed;
  summary.distinct_schedules = schedules.size();
  summary.hardware_seconds = hardware;
  summary.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  summary.load_seconds = load_seconds;
  // No search runs outside the backend: the autoscheduler's own time is the worker's, charged above.
  summary.search_after.assign(best_after.size(), 0.0);
  summary.best_after = std::move(best_after);
  summary.hardware_after = std::move(hardware_after);
  return written(std::move(summary), output);
}

// tune_target's phases over what they share: the target, what is built to tune it (in place: the
// score cache refers to the model), and what is known of its default before and after tuning.
struct TargetTuning {
  // Builds the backend (wrapped as the options ask), the model and its score cache, and the strategy.
  TargetTuning(const Campaign& campaign, const Corpus& corpus, const MeasuredKernel& measured,
               const std::vector<std::pair<std::string, Config>>& named_defaults, const BackendTraits& traits,
               const CampaignRunOptions& options);

  const Campaign& campaign;
  const MeasuredKernel& measured;
  const std::vector<std::pair<std::string, Config>>& named_defaults;
  const BackendTraits& traits;
  const CampaignRunOptions& options;
  std::unique_ptr<Backend> backend;
  std::unique_ptr<CostModel> model;
  std::unique_ptr<Strategy> strategy;
  std::optional<CachedCostModel> cached_model;
  // Set by find_defaults; a live default's runtime by note_measured_default.
  std::optional<Config> default_cfg;
  std::optional<double> default_seconds;
  std::optional<double> optimum_seconds;
  TunerOptions tuner_options;

  void find_defaults();
  std::function<void(const RoundReport&)> progress_line() const;
  void note_measured_default(const TuneResult& result);
  CampaignSummary summarize(const TuneResult& result, const std::string& records_path);
  void summarize_named_defaults(std::vector<SummaryDefault>& defaults, const TuneResult& result,
                                const std::optional<double>& best_seconds);
  void summarize_peers(std::vector<SummaryDefault>& defaults, const std::optional<double>& best_seconds);
  void summarize_time(CampaignSummary& summary, TuningDetails& tuning, const TuneResult& result) const;
};

TargetTuning::TargetTuning(const Campaign& campaign, const Corpus& corpus, const MeasuredKernel& measured,
                           const std::vector<std::pair<std::string, Config>>& named_defaults, const BackendTraits& traits,
                           const CampaignRunOptions& options)
    : campaign(campaign), measured(measured), named_defaults(named_defaults), traits(traits), options(options) {
  backend = make_backend(campaign.backend, corpus, measured.device, options.wrap_device);
  if (options.wrap_backend) backend = options.wrap_backend(std::move(backend));
  model = make_model(campaign.model, measured.device);
  strategy = make_strategy(campaign.strategy, load_reranker);
  // Search asks the model about the configs it revisits through a score cache. Only an online
  // learned model, or any with a residual on the target, changes its scores at update(); the
  // analytical model's update() is a no-op.
  if (model)
    cached_model.emplace(*model, CachedCostModelOptions{.inner_learns = campaign.model.type == "learned" || campaign.model.residual});
}

// The default's runtime: from the recording when replaying it (free), else measured first.
void TargetTuning::find_defaults() {
  default_cfg = default_config(campaign, measured);
  if (!default_cfg && !named_defaults.empty()) default_cfg = named_defaults.front().second;
  tuner_options = campaign.tuner;
  if (traits.recorded) {
    for (const Measurement& m : measured.measurements) {
      if (!m.result.ok()) continue;
      if (default_cfg && m.config == *default_cfg && !default_seconds) default_seconds = m.result.seconds;
      optimum_seconds = std::min(optimum_seconds.value_or(INFINITY), m.result.seconds);
    }
  } else {
    if (default_cfg) tuner_options.measure_first.push_back(*default_cfg);
    for (const auto& [name, config] : named_defaults)
      if (!default_cfg || !(config == *default_cfg)) tuner_options.measure_first.push_back(config);
  }
}

// The line printed after each round: measurements and hardware seconds against their budgets, the
// best so far and its speedup over the default.
std::function<void(const RoundReport&)> TargetTuning::progress_line() const {
  std::string budget_text;
  if (campaign.tuner.max_measurements) budget_text.append("/").append(std::to_string(campaign.tuner.max_measurements));
  return [this, budget_text](const RoundReport& report) {
    if (!options.progress) return;
    std::ostream& out = *options.progress;
    out << "[tune] round " << report.round + 1 << "  measured " << report.measured << budget_text << "  hardware "
        << format_seconds(report.hardware_seconds);
    if (campaign.tuner.max_hardware_seconds > 0) out << "/" << format_seconds(campaign.tuner.max_hardware_seconds);
    if (report.best_seconds) {
      out << "  best " << format_seconds(*report.best_seconds);
      if (default_seconds) out << "  speedup " << std::setprecision(3) << *default_seconds / *report.best_seconds << "x over default";
    } else {
      out << "  best none yet";
    }
    if (report.failed) out << "  (" << report.failed << " failed)";
    out << std::endl;
  };
}

// A default the recording has no runtime for: the one the tuning loop measured, if any.
void TargetTuning::note_measured_default(const TuneResult& result) {
  if (default_cfg && !default_seconds)
    if (const MeasureResult* measured_default = result.history.find(*default_cfg); measured_default && measured_default->ok())
      default_seconds = measured_default->seconds;
}

// The run's summary, all but the time to load its source. Measures the backend's peers for a live program target.
CampaignSummary TargetTuning::summarize(const TuneResult& result, const std::string& records_path) {
  const SearchSpace& space = *measured.space;
  CampaignSummary summary = summary_head(campaign, measured.kernel, backend->fingerprint(), strategy->name());
  TuningDetails& tuning = summary.tuning.emplace();
  tuning.model = campaign.model.type;
  const auto best = result.history.best();
  tuning.best_config = best ? space.to_json(result.history.entries()[*best].config) : nlohmann::ordered_json(nullptr);
  if (best) summary.best_seconds = result.history.entries()[*best].result.seconds;
  const std::optional<double>& best_seconds = summary.best_seconds;
  tuning.default_config = default_cfg ? space.to_json(*default_cfg) : nlohmann::ordered_json(nullptr);
  summary.default_seconds = default_seconds;
  if (best_seconds && default_seconds) tuning.speedup_over_default = *default_seconds / *best_seconds;
  if (!named_defaults.empty()) summarize_named_defaults(tuning.defaults.emplace(), result, best_seconds);
  tuning.optimum_seconds = optimum_seconds;
  summary.measurements = result.history.size();
  summary.failed = result.failed;
  for (const auto& [status, count] : result.failed_by_status) tuning.failed_by_status[std::string(status_name(status))] = count;
  tuning.quarantined = result.quarantined.size();
  tuning.retries = result.retries;
  tuning.confirm_best = tuner_options.confirm_best;
  tuning.confirm_close_best = tuner_options.confirm_close_best;
  tuning.confirmations = result.confirmations;
  if (const auto* faulty = dynamic_cast<const FaultInjectingBackend*>(backend.get())) {
    auto& injected = tuning.faults_injected.emplace();
    for (FaultKind kind : all_fault_kinds()) injected[std::string(fault_kind_name(kind))] = faulty->injected(kind);
  }
  tuning.from_log = result.from_log;
  tuning.rounds = result.rounds;
  summarize_time(summary, tuning, result);
  tuning.stop_reason = std::string(stop_reason_name(result.stop));
  summary.best_after = result.best_after;
  double charged = 0.0;
  for (const Measurement& entry : result.history.entries()) summary.hardware_after.push_back(charged += entry.result.cost_seconds);
  summary.search_after = result.search_after;
  tuning.records = records_path;
  return summary;
}

// Every default the program target names (no fusion, greedy fusion), and the speedup over each.
void TargetTuning::summarize_named_defaults(std::vector<SummaryDefault>& defaults, const TuneResult& result,
                                            const std::optional<double>& best_seconds) {
  const SearchSpace& space = *measured.space;
  for (const auto& [name, config] : named_defaults) {
    SummaryDefault entry{.name = name, .config = space.to_json(config)};
    if (const MeasureResult* result_of_default = result.history.find(config); result_of_default && result_of_default->ok())
      entry.seconds = result_of_default->seconds;
    if (best_seconds && entry.seconds) entry.speedup = *entry.seconds / *best_seconds;
    defaults.push_back(std::move(entry));
  }
  if (options.measure_peers && !traits.recorded) summarize_peers(defaults, best_seconds);
}

// The platform's own schedulers, measured now beside the named defaults; a peer that fails is listed with its reason.
void TargetTuning::summarize_peers(std::vector<SummaryDefault>& defaults, const std::optional<double>& best_seconds) {
  if (options.progress) *options.progress << "[tune] measuring the platform's own schedulers" << std::endl;
  for (const PeerMeasurement& peer : backend->measure_peers(measured.kernel)) {
    SummaryDefault entry{.name = peer.name, .kind = peer_kind_name(peer.kind), .status = std::string(status_name(peer.result.status)),
                         .settings = peer.settings};
    if (peer.result.ok()) entry.seconds = peer.result.seconds;
    if (best_seconds && entry.seconds) entry.speedup = *entry.seconds / *best_seconds;
    if (!peer.result.ok()) {
      entry.message = peer.result.message;
      if (options.progress)
        *options.progress << "[tune] " << peer.name << " failed (" << status_name(peer.result.status) << "): " << peer.result.message
                          << "; the campaign goes on" << std::endl;
    }
    defaults.push_back(std::move(entry));
  }
}

// The run's hardware and wall time, and how much of it the loop spent outside the backend, on what.
void TargetTuning::summarize_time(CampaignSummary& summary, TuningDetails& tuning, const TuneResult& result) const {
  summary.hardware_seconds = result.hardware_seconds;
  summary.wall_seconds = result.wall_seconds;
  const double outside = std::max(0.0, result.wall_seconds - result.backend_wall_seconds);
  tuning.search_seconds = outside;
  tuning.search_share = result.wall_seconds > 0 ? outside / result.wall_seconds : 0.0;
  if (tuner_options.search_time_share > 0 && tuner_options.search_time_share < 1) tuning.search_time_share = tuner_options.search_time_share;
  // Where the time outside the backend went (the backend's own time includes compiling kernels).
  OutsideBackend& breakdown = tuning.outside_backend;
  breakdown.propose_seconds = result.propose_seconds;
  breakdown.rank_seconds = result.rank_seconds;
  breakdown.update_seconds = result.update_seconds;
  breakdown.record_seconds = result.record_seconds;
  breakdown.other_seconds = std::max(0.0, outside - result.propose_seconds - result.rank_seconds - result.update_seconds - result.record_seconds);
  if (cached_model)
    breakdown.model = OutsideBackend::ModelCache{cached_model->inner_predict_seconds(), cached_model->hits(), cached_model->misses()};
}

// Tunes `measured` (a kernel of `corpus`, or a program target with `named_defaults`) and writes
// the summary (the only place that writes it), with the caller's time to load the source.
CampaignSummary tune_target(const Campaign& campaign, const Corpus& corpus, const MeasuredKernel& measured,
                                   const std::vector<std::pair<std::string, Config>>& named_defaults,
                                   double load_seconds, const CampaignRunOptions& options) {
  const BackendTraits traits = backend_traits(campaign.backend);
  if (!traits.recorded && measured.kernel.body().empty())
    throw InputError(campaign.file, "$.backend.type",
                     "\"replay\" for kernel " + measured.kernel.name() + ": it comes from a recording and has no graph to run");
  if (const auto* sampling = std::get_if<AutoschedulerSamplingOptions>(&campaign.strategy.options))
    return sample_target(campaign, measured, *sampling, load_seconds, options);

  TargetTuning target(campaign, corpus, measured, named_defaults, traits, options);
  target.find_defaults();

  const std::string output = options.output.empty() ? campaign.output : options.output;
  // Held until the summary is written: a second `tune` on this folder stops here, at once.
  const OutputLock lock = lock_output_folder(output);
  const std::string records_path = (std::filesystem::path(output) / "records.jsonl").string();
  const std::vector<Record> logged = resumed_records(records_path, options.progress);
  RecordLog log(records_path);

  Tuner tuner(*target.backend, *target.strategy, target.cached_model ? &*target.cached_model : nullptr, &log, target.tuner_options);
  const TuneResult result = tuner.run(measured.kernel, *measured.space, logged, target.progress_line());
  target.note_measured_default(result);

  CampaignSummary summary = target.summarize(result, records_path);
  summary.load_seconds = load_seconds;
  return written(std::move(summary), output);
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

CampaignSummary run_campaign(const Campaign& campaign, const CampaignRunOptions& options) {
  if (!campaign.source.network.empty())
    throw InputError(campaign.file, "$.source.network", "a kernel's source here; a network is tuned by tune_network (autotuner/network/network_tuner.h)");
  const auto load_start = std::chrono::steady_clock::now();
  auto load_seconds = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - load_start).count(); };
  if (!campaign.source.program.empty()) {
    // A program source: nothing recorded; the live backend measures the target and its defaults.
    ProgramTarget target = program_target(campaign);
    MeasuredKernel measured;
    measured.kernel = std::move(target.kernel);
    measured.space = std::move(target.space);
    return tune_target(campaign, Corpus{}, measured, target.defaults, load_seconds(), options);
  }
  const Corpus corpus = load_source(campaign.source.path);
  return tune_target(campaign, corpus, campaign_kernel(corpus, campaign), {}, load_seconds(), options);
}

CampaignSummary run_campaign(const Campaign& campaign, const Corpus& corpus, const CampaignRunOptions& options) {
  if (!campaign.source.program.empty())
    throw InputError(campaign.file, "$.source.program", "a recorded source (\"path\") when the corpus is given");
  return tune_target(campaign, corpus, campaign_kernel(corpus, campaign), {}, 0.0, options);
}

void serve_campaign(const Campaign& campaign, Ranks& ranks) {
  // A serving rank measures on its device alone: rank 0 draws the campaign's faults above the
  // spread (make_backend's wrap_device), so that they follow one process's attempts.
  BackendSpec device = campaign.backend;
  device.faults.reset();
  if (!campaign.source.program.empty() || !campaign.source.network.empty()) {
    const auto backend = make_backend(device, Corpus{}, "");
    return serve_measurements(*backend, ranks);
  }
  const Corpus corpus = load_source(campaign.source.path);
  const auto backend = make_backend(device, corpus, campaign_kernel(corpus, campaign).device);
  serve_measurements(*backend, ranks);
}

}  // namespace perftune
