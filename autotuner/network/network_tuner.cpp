#include "autotuner/network/network_tuner.h"

#include <chrono>
#include <cmath>
#include <filesystem>
#include <iomanip>
#include <optional>
#include <ostream>
#include <sstream>

#include "autotuner/network/network_tasks.h"
#include "autotuner/tuning_session.h"
#include "autotuner/resumed_records.h"
#include "autotuner/summary_fields.h"
#include "ir/file_io.h"
#include "ir/input_error.h"
#include "ir/output_lock.h"
#include "ir/record_log.h"
#include "search/cached_cost_model.h"

namespace perftune {

namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

std::string format_duration(double seconds) {
  const long total = std::lround(std::max(0.0, seconds));
  std::ostringstream out;
  if (total >= 3600) out << total / 3600 << "h" << std::setw(2) << std::setfill('0') << (total % 3600) / 60 << "m";
  else if (total >= 60) out << total / 60 << "m" << std::setw(2) << std::setfill('0') << total % 60 << "s";
  else out << total << "s";
  return out.str();
}

// One kernel's loop and what it needs to live as long as it.
struct TaskRun {
  std::unique_ptr<Strategy> strategy;
  std::unique_ptr<CachedCostModel> model;
  std::unique_ptr<TuningSession> session;
  TaskProgress progress;
  double adopted_hardware_seconds = 0;  // what the log's records of it were charged
};

std::optional<double> best_of(const TuningSession& session) {
  const History& history = session.result().history;
  if (const auto best = history.best()) return history.entries()[*best].result.seconds;
  return std::nullopt;
}

std::optional<double> seconds_of(const TuningSession& session, const Config& config) {
  const MeasureResult* result = session.result().history.find(config);
  if (result && result->ok()) return result->seconds;
  return std::nullopt;
}

// Totals over every kernel's loop so far.
struct NetworkTotals {
  std::size_t measurements = 0, failed = 0;
  double hardware = 0, tuning = 0, search = 0;
};

// One network's tuning: a loop per distinct kernel, the rounds given out by the task scheduler,
// network.json rewritten after each. Phases: set_up_tasks (sessions resumed from the log),
// resume_rounds (the last network.json's rounds), run (the rounds), summary (network.json).
class NetworkTuning {
 public:
  NetworkTuning(const Campaign& campaign, const NetworkTuneOptions& options, NetworkPartition network, double load_seconds,
                std::chrono::steady_clock::time_point start)
      : campaign_(campaign),
        options_(options),
        network_(std::move(network)),
        load_seconds_(load_seconds),
        start_(start),
        output_(options.output.empty() ? campaign.output : options.output),
        lock_(lock_output_folder(output_)),
        records_path_((std::filesystem::path(output_) / "records.jsonl").string()),
        summary_path_((std::filesystem::path(output_) / "network.json").string()),
        logged_(resumed_records(records_path_, options.progress)),
        log_(records_path_),
        backend_(make_backend(campaign.backend, Corpus{}, "", options.wrap_device)),
        model_(make_model(campaign.model, "")),
        // A time budget is shared per second of a kernel's rounds, a measurement budget per measurement.
        time_budget_(campaign.max_tuning_seconds > 0 || campaign.tuner.max_hardware_seconds > 0) {
    set_up_tasks();
    resume_rounds();
  }

  nlohmann::ordered_json run();

 private:
  void set_up_tasks();
  void resume_rounds();
  NetworkTotals totals() const;
  double budget_share(const NetworkTotals& t) const;  // of the budget spent: the largest of its parts'
  std::optional<double> latency(bool heuristic) const;
  nlohmann::ordered_json summary(bool final) const;
  void print_round(std::size_t round, std::size_t chosen, const NetworkTotals& now, std::optional<double> estimate) const;

  const Campaign& campaign_;
  const NetworkTuneOptions& options_;
  NetworkPartition network_;
  double load_seconds_;
  std::chrono::steady_clock::time_point start_;
  std::string output_;
  OutputLock lock_;
  std::string records_path_;
  std::string summary_path_;
  std::vector<Record> logged_;
  RecordLog log_;
  std::unique_ptr<Backend> backend_;
  std::unique_ptr<CostModel> model_;
  bool time_budget_;
  TunerOptions tuner_options_;
  std::vector<TaskRun> runs_;
  nlohmann::ordered_json rounds_ = nlohmann::ordered_json::array();
  double earlier_tuning_ = 0;
  std::string stop_reason_ = "space_exhausted";
};

void NetworkTuning::set_up_tasks() {
  tuner_options_ = campaign_.tuner;
  // The network's budget is the scheduler's; each kernel's loop is bounded by its space (and the
  // campaign's early stopping) alone.
  tuner_options_.max_measurements = SIZE_MAX / 2;
  tuner_options_.max_hardware_seconds = 0;
  tuner_options_.top_k = campaign_.tuner.top_k ? campaign_.tuner.top_k : kNetworkTopK;
  tuner_options_.adopt_logged = true;
  const bool learns = campaign_.model.type == "learned" || campaign_.model.residual;
  runs_.resize(network_.tasks.size());
  for (std::size_t i = 0; i < network_.tasks.size(); ++i) {
    const NetworkTask& task = network_.tasks[i];
    TaskRun& run = runs_[i];
    run.strategy = make_strategy(campaign_.strategy, load_reranker);
    if (model_) run.model = std::make_unique<CachedCostModel>(*model_, CachedCostModelOptions{.inner_learns = learns});
    TunerOptions per_task = tuner_options_;
    per_task.measure_first = {task.heuristic};
    // Each kernel's random streams differ, or every kernel's first random picks would match.
    per_task.seed = campaign_.tuner.seed * 1000003 + i;
    run.session = std::make_unique<TuningSession>(*backend_, *run.strategy, run.model.get(), &log_, per_task, task.kernel,
                                                  *task.space, logged_);
    run.progress.instances = static_cast<double>(task.instances.size());
    const TuneResult& adopted = run.session->result();
    if (adopted.history.size() > 0) {
      // What the log held counts as one round of the kernel, charged what it cost.
      run.adopted_hardware_seconds = adopted.hardware_seconds;
      run.progress.best_after_round.push_back(best_of(*run.session));
      run.progress.spent = time_budget_ ? adopted.hardware_seconds : static_cast<double>(adopted.history.size());
    }
  }
}

// A rerun goes on from the last network.json: its rounds, and the tuning time they took (search
// included, which the records' charged hardware time leaves out).
void NetworkTuning::resume_rounds() {
  for (const TaskRun& run : runs_) earlier_tuning_ += run.adopted_hardware_seconds;
  if (!path_exists(summary_path_)) return;
  try {
    const auto earlier = nlohmann::ordered_json::parse(read_file(summary_path_));
    if (earlier.value("source", "") == std::filesystem::absolute(campaign_.source.network).string()) {
      rounds_ = earlier.at("rounds");
      earlier_tuning_ = std::max(earlier_tuning_, earlier.at("tuning_seconds").get<double>());
    }
  } catch (const std::exception& error) {
    if (options_.progress) *options_.progress << "[tune] " << summary_path_ << " is not readable (" << error.what() << "); its rounds are not kept\n";
  }
}

NetworkTotals NetworkTuning::totals() const {
  NetworkTotals t;
  for (const TaskRun& run : runs_) {
    const TuneResult& r = run.session->result();
    t.measurements += r.history.size();
    t.failed += r.failed;
    t.hardware += r.hardware_seconds;
    t.tuning += r.wall_seconds;  // this run's loop time, the backend's included
    t.search += r.wall_seconds - r.backend_wall_seconds;
  }
  t.tuning += earlier_tuning_;
  return t;
}

double NetworkTuning::budget_share(const NetworkTotals& t) const {
  double share = 0;
  const TunerOptions& budget = campaign_.tuner;
  if (budget.max_measurements) share = std::max(share, static_cast<double>(t.measurements) / static_cast<double>(budget.max_measurements));
  if (budget.max_hardware_seconds > 0) share = std::max(share, t.hardware / budget.max_hardware_seconds);
  if (campaign_.max_tuning_seconds > 0) share = std::max(share, t.tuning / campaign_.max_tuning_seconds);
  return share;
}

std::optional<double> NetworkTuning::latency(bool heuristic) const {
  double sum = 0;
  for (std::size_t i = 0; i < runs_.size(); ++i) {
    const auto seconds = heuristic ? seconds_of(*runs_[i].session, network_.tasks[i].heuristic) : best_of(*runs_[i].session);
    if (!seconds) return std::nullopt;
    sum += *seconds * static_cast<double>(network_.tasks[i].instances.size());
  }
  return sum;
}

nlohmann::ordered_json NetworkTuning::summary(bool final) const {
  const auto t = totals();
  nlohmann::ordered_json out;
  out["network"] = network_.program.name();
  out["source"] = std::filesystem::absolute(campaign_.source.network).string();
  out["campaign"] = campaign_.name;
  out["device"] = backend_->fingerprint();
  out["allocation"] = allocation_name(campaign_.allocation);
  out["model"] = campaign_.model.type;
  out["strategy"] = runs_.empty() ? "" : runs_.front().strategy->name();
  auto set = [](double value) { return optional_number(value > 0 ? std::optional<double>(value) : std::nullopt); };
  out["budget"] = {{"measurements", campaign_.tuner.max_measurements ? nlohmann::ordered_json(campaign_.tuner.max_measurements) : nlohmann::ordered_json(nullptr)},
                   {"hardware_seconds", set(campaign_.tuner.max_hardware_seconds)},
                   {"minutes", set(campaign_.max_tuning_seconds / 60)}};
  out["top_k"] = tuner_options_.top_k;
  out["kernels"] = network_.plan.kernels.size();
  out["tasks"] = network_.tasks.size();
  const auto now = latency(false), heuristic = latency(true);
  out["latency_seconds"] = optional_number(now);
  out["heuristic_latency_seconds"] = optional_number(heuristic);
  out["speedup_over_heuristic"] = optional_number(now && heuristic ? std::optional<double>(*heuristic / *now) : std::nullopt);
  out["measurements"] = t.measurements;
  out["failed"] = t.failed;
  out["hardware_seconds"] = t.hardware;
  out["tuning_seconds"] = t.tuning;
  out["search_seconds"] = t.search;
  out["wall_seconds"] = seconds_since(start_);
  out["load_seconds"] = load_seconds_;
  out["stop_reason"] = final ? nlohmann::ordered_json(stop_reason_) : nlohmann::ordered_json("running");
  nlohmann::ordered_json untimed = nlohmann::ordered_json::array();
  nlohmann::ordered_json tasks = nlohmann::ordered_json::array();
  for (std::size_t i = 0; i < runs_.size(); ++i) {
    const NetworkTask& task = network_.tasks[i];
    const TuningSession& session = *runs_[i].session;
    const TuneResult& r = session.result();
    nlohmann::ordered_json instances = nlohmann::ordered_json::array();
    for (std::size_t k : task.instances) instances.push_back(network_.plan.kernels[k].kernel.name());
    const auto best = best_of(session);
    if (!best) untimed.push_back(task.kernel.name());
    const auto best_index = r.history.best();
    nlohmann::ordered_json entry;
    entry["name"] = task.kernel.name();
    entry["key"] = task.kernel.key();
    entry["instances"] = std::move(instances);
    entry["measurements"] = r.history.size();
    entry["failed"] = r.failed;
    entry["rounds"] = runs_[i].progress.best_after_round.size();
    entry["best_seconds"] = optional_number(best);
    entry["heuristic_seconds"] = optional_number(seconds_of(session, task.heuristic));
    entry["best_config"] = best_index ? task.space->to_json(r.history.entries()[*best_index].config) : nlohmann::ordered_json(nullptr);
    entry["share_of_latency"] = best && now ? nlohmann::ordered_json(*best * static_cast<double>(task.instances.size()) / *now)
                                            : nlohmann::ordered_json(nullptr);
    entry["finished"] = runs_[i].progress.finished;
    tasks.push_back(std::move(entry));
  }
  out["untimed"] = std::move(untimed);
  out["records"] = records_path_;
  out["rounds"] = rounds_;
  out["task_list"] = std::move(tasks);
  return out;
}

void NetworkTuning::print_round(std::size_t round, std::size_t chosen, const NetworkTotals& now, std::optional<double> estimate) const {
  if (!options_.progress) return;
  const double share = std::min(budget_share(now), 1.0);
  constexpr int kBar = 20;
  const int filled = static_cast<int>(std::lround(share * kBar));
  std::ostream& out = *options_.progress;
  out << "[tune] [" << std::string(filled, '#') << std::string(kBar - filled, '-') << "] " << std::setw(3)
      << std::lround(share * 100) << "%  round " << round + 1 << "  " << network_.tasks[chosen].kernel.name() << " (x"
      << network_.tasks[chosen].instances.size() << ")  network ";
  if (estimate) {
    out << format_seconds(*estimate);
  } else {
    std::size_t timed = 0;
    for (const TaskRun& r : runs_) timed += best_of(*r.session) ? 1 : 0;
    out << "? (" << timed << "/" << runs_.size() << " kernels timed)";
  }
  if (const auto heuristic = latency(true); heuristic && estimate)
    out << " (heuristic " << format_seconds(*heuristic) << ", " << std::setprecision(3) << *heuristic / *estimate << "x)";
  out << "  measured " << now.measurements;
  if (now.failed) out << " (" << now.failed << " failed)";
  if (share > 0) out << "  " << format_duration(now.tuning * (1 - share) / share) << " left";
  out << std::endl;
}

nlohmann::ordered_json NetworkTuning::run() {
  if (options_.progress)
    *options_.progress << "[tune] " << network_.program.name() << ": " << network_.plan.kernels.size() << " kernels, "
                      << network_.tasks.size() << " distinct; allocation " << allocation_name(campaign_.allocation) << ", "
                      << tuner_options_.top_k << " configs per round" << std::endl;
  for (std::size_t round = rounds_.size();; ++round) {
    const auto t = totals();
    if (budget_share(t) >= 1) {
      stop_reason_ = "budget";
      break;
    }
    std::vector<TaskProgress> progress;
    for (const TaskRun& run : runs_) progress.push_back(run.progress);
    const auto chosen = next_task(campaign_.allocation, progress);
    if (!chosen) break;
    TaskRun& run = runs_[*chosen];
    const TuneResult& before = run.session->result();
    const std::size_t measured_before = before.history.size();
    const double wall_before = before.wall_seconds;
    // A kernel's first round measures its heuristic alone: the network has a latency after one
    // measurement per kernel, and the allocation starts from every kernel's share of it.
    const std::size_t first_round = run.progress.best_after_round.empty() ? 1 : SIZE_MAX;
    const std::size_t at_most = std::min(first_round, campaign_.tuner.max_measurements ? campaign_.tuner.max_measurements - t.measurements : SIZE_MAX);
    if (!run.session->step(at_most)) {
      run.progress.finished = true;
      continue;
    }
    const TuneResult& after = run.session->result();
    run.progress.best_after_round.push_back(best_of(*run.session));
    run.progress.spent += time_budget_ ? after.wall_seconds - wall_before : static_cast<double>(after.history.size() - measured_before);
    // A kernel with nothing that ran after its second round cannot be scheduled on this backend:
    // its heuristic is the fallback and its budget goes elsewhere.
    if (!run.progress.best_after_round.back() && run.progress.best_after_round.size() >= 2) run.progress.finished = true;

    const auto now = totals();
    const auto estimate = latency(false);
    rounds_.push_back({{"round", round},
                      {"task", network_.tasks[*chosen].kernel.name()},
                      {"measurements", now.measurements},
                      {"tuning_seconds", now.tuning},
                      {"latency_seconds", optional_number(estimate)}});
    write_file_atomically(summary_path_, summary(false).dump(1) + "\n");
    print_round(round, *chosen, now, estimate);
  }
  nlohmann::ordered_json result = summary(true);
  write_file_atomically(summary_path_, result.dump(1) + "\n");
  return result;
}

}  // namespace

nlohmann::ordered_json tune_network(const Campaign& campaign, const NetworkTuneOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  if (campaign.source.network.empty()) throw InputError(campaign.file, "$.source", "a \"network\" to tune");
  if (backend_traits(campaign.backend).recorded)
    throw InputError(campaign.file, "$.backend.type", "a live backend (\"cpu\" or \"command\"): a network's kernels are measured, not replayed");
  if (!path_exists(campaign.source.network))
    throw InputError(campaign.file, "$.source.network", "a network file, but " + campaign.source.network + " does not exist");
  NetworkPartition network = partition_network(load_network(campaign.source.network), campaign.source.network);
  const double load_seconds = seconds_since(start);
  return NetworkTuning(campaign, options, std::move(network), load_seconds, start).run();
}

}  // namespace perftune
