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

  const std::string output = options.output.empty() ? campaign.output : options.output;
  const OutputLock lock = lock_output_folder(output);
  const std::string records_path = (std::filesystem::path(output) / "records.jsonl").string();
  const std::vector<Record> logged = resumed_records(records_path, options.progress);
  RecordLog log(records_path);

  std::unique_ptr<Backend> backend = make_backend(campaign.backend, Corpus{}, "", options.wrap_device);
  std::unique_ptr<CostModel> model = make_model(campaign.model, "");
  TunerOptions tuner_options = campaign.tuner;
  // The network's budget is the scheduler's; each kernel's loop is bounded by its space (and the
  // campaign's early stopping) alone.
  tuner_options.max_measurements = SIZE_MAX / 2;
  tuner_options.max_hardware_seconds = 0;
  tuner_options.top_k = campaign.tuner.top_k ? campaign.tuner.top_k : kNetworkTopK;
  tuner_options.adopt_logged = true;
  const bool learns = campaign.model.type == "learned" || campaign.model.residual;
  // A time budget is shared per second of a kernel's rounds, a measurement budget per measurement.
  const bool time_budget = campaign.max_tuning_seconds > 0 || campaign.tuner.max_hardware_seconds > 0;

  std::vector<TaskRun> runs(network.tasks.size());
  for (std::size_t i = 0; i < network.tasks.size(); ++i) {
    const NetworkTask& task = network.tasks[i];
    TaskRun& run = runs[i];
    run.strategy = make_strategy(campaign.strategy, load_reranker);
    if (model) run.model = std::make_unique<CachedCostModel>(*model, CachedCostModelOptions{.inner_learns = learns});
    TunerOptions per_task = tuner_options;
    per_task.measure_first = {task.heuristic};
    // Each kernel's random streams differ, or every kernel's first random picks would match.
    per_task.seed = campaign.tuner.seed * 1000003 + i;
    run.session = std::make_unique<TuningSession>(*backend, *run.strategy, run.model.get(), &log, per_task, task.kernel,
                                                  *task.space, logged);
    run.progress.instances = static_cast<double>(task.instances.size());
    const TuneResult& adopted = run.session->result();
    if (adopted.history.size() > 0) {
      // What the log held counts as one round of the kernel, charged what it cost.
      run.adopted_hardware_seconds = adopted.hardware_seconds;
      run.progress.best_after_round.push_back(best_of(*run.session));
      run.progress.spent = time_budget ? adopted.hardware_seconds : static_cast<double>(adopted.history.size());
    }
  }

  // A rerun goes on from the last network.json: its rounds, and the tuning time they took (search
  // included, which the records' charged hardware time leaves out).
  const std::string summary_path = (std::filesystem::path(output) / "network.json").string();
  nlohmann::ordered_json rounds = nlohmann::ordered_json::array();
  double earlier_tuning = 0;
  for (const TaskRun& run : runs) earlier_tuning += run.adopted_hardware_seconds;
  if (path_exists(summary_path)) {
    try {
      const auto earlier = nlohmann::ordered_json::parse(read_file(summary_path));
      if (earlier.value("source", "") == std::filesystem::absolute(campaign.source.network).string()) {
        rounds = earlier.at("rounds");
        earlier_tuning = std::max(earlier_tuning, earlier.at("tuning_seconds").get<double>());
      }
    } catch (const std::exception& error) {
      if (options.progress) *options.progress << "[tune] " << summary_path << " is not readable (" << error.what() << "); its rounds are not kept\n";
    }
  }
  auto totals = [&] {
    struct Totals {
      std::size_t measurements = 0, failed = 0;
      double hardware = 0, tuning = 0, search = 0;
    } t;
    for (const TaskRun& run : runs) {
      const TuneResult& r = run.session->result();
      t.measurements += r.history.size();
      t.failed += r.failed;
      t.hardware += r.hardware_seconds;
      t.tuning += r.wall_seconds;  // this run's loop time, the backend's included
      t.search += r.wall_seconds - r.backend_wall_seconds;
    }
    t.tuning += earlier_tuning;
    return t;
  };
  // The share of the budget spent: the largest of its parts'.
  auto budget_share = [&](const auto& t) {
    double share = 0;
    if (campaign.tuner.max_measurements) share = std::max(share, static_cast<double>(t.measurements) / static_cast<double>(campaign.tuner.max_measurements));
    if (campaign.tuner.max_hardware_seconds > 0) share = std::max(share, t.hardware / campaign.tuner.max_hardware_seconds);
    if (campaign.max_tuning_seconds > 0) share = std::max(share, t.tuning / campaign.max_tuning_seconds);
    return share;
  };
  auto latency = [&](bool heuristic) -> std::optional<double> {
    double sum = 0;
    for (std::size_t i = 0; i < runs.size(); ++i) {
      const auto seconds = heuristic ? seconds_of(*runs[i].session, network.tasks[i].heuristic) : best_of(*runs[i].session);
      if (!seconds) return std::nullopt;
      sum += *seconds * static_cast<double>(network.tasks[i].instances.size());
    }
    return sum;
  };

  std::string stop_reason = "space_exhausted";
  auto summary = [&](bool final) {
    const auto t = totals();
    nlohmann::ordered_json out;
    out["network"] = network.program.name();
    out["source"] = std::filesystem::absolute(campaign.source.network).string();
    out["campaign"] = campaign.name;
    out["device"] = backend->fingerprint();
    out["allocation"] = allocation_name(campaign.allocation);
    out["model"] = campaign.model.type;
    out["strategy"] = runs.empty() ? "" : runs.front().strategy->name();
    auto set = [](double value) { return optional_number(value > 0 ? std::optional<double>(value) : std::nullopt); };
    out["budget"] = {{"measurements", campaign.tuner.max_measurements ? nlohmann::ordered_json(campaign.tuner.max_measurements) : nlohmann::ordered_json(nullptr)},
                     {"hardware_seconds", set(campaign.tuner.max_hardware_seconds)},
                     {"minutes", set(campaign.max_tuning_seconds / 60)}};
    out["top_k"] = tuner_options.top_k;
    out["kernels"] = network.plan.kernels.size();
    out["tasks"] = network.tasks.size();
    const auto now = latency(false), heuristic = latency(true);
    out["latency_seconds"] = optional_number(now);
    out["heuristic_latency_seconds"] = optional_number(heuristic);
    out["speedup_over_heuristic"] = optional_number(now && heuristic ? std::optional<double>(*heuristic / *now) : std::nullopt);
    out["measurements"] = t.measurements;
    out["failed"] = t.failed;
    out["hardware_seconds"] = t.hardware;
    out["tuning_seconds"] = t.tuning;
    out["search_seconds"] = t.search;
    out["wall_seconds"] = seconds_since(start);
    out["load_seconds"] = load_seconds;
    out["stop_reason"] = final ? nlohmann::ordered_json(stop_reason) : nlohmann::ordered_json("running");
    nlohmann::ordered_json untimed = nlohmann::ordered_json::array();
    nlohmann::ordered_json tasks = nlohmann::ordered_json::array();
    for (std::size_t i = 0; i < runs.size(); ++i) {
      const NetworkTask& task = network.tasks[i];
      const TuningSession& session = *runs[i].session;
      const TuneResult& r = session.result();
      nlohmann::ordered_json instances = nlohmann::ordered_json::array();
      for (std::size_t k : task.instances) instances.push_back(network.plan.kernels[k].kernel.name());
      const auto best = best_of(session);
      if (!best) untimed.push_back(task.kernel.name());
      const auto best_index = r.history.best();
      nlohmann::ordered_json entry;
      entry["name"] = task.kernel.name();
      entry["key"] = task.kernel.key();
      entry["instances"] = std::move(instances);
      entry["measurements"] = r.history.size();
      entry["failed"] = r.failed;
      entry["rounds"] = runs[i].progress.best_after_round.size();
      entry["best_seconds"] = optional_number(best);
      entry["heuristic_seconds"] = optional_number(seconds_of(session, task.heuristic));
      entry["best_config"] = best_index ? task.space->to_json(r.history.entries()[*best_index].config) : nlohmann::ordered_json(nullptr);
      entry["share_of_latency"] = best && now ? nlohmann::ordered_json(*best * static_cast<double>(task.instances.size()) / *now)
                                              : nlohmann::ordered_json(nullptr);
      entry["finished"] = runs[i].progress.finished;
      tasks.push_back(std::move(entry));
    }
    out["untimed"] = std::move(untimed);
    out["records"] = records_path;
    out["rounds"] = rounds;
    out["task_list"] = std::move(tasks);
    return out;
  };

  if (options.progress)
    *options.progress << "[tune] " << network.program.name() << ": " << network.plan.kernels.size() << " kernels, "
                      << network.tasks.size() << " distinct; allocation " << allocation_name(campaign.allocation) << ", "
                      << tuner_options.top_k << " configs per round" << std::endl;
  for (std::size_t round = rounds.size();; ++round) {
    const auto t = totals();
    if (budget_share(t) >= 1) {
      stop_reason = "budget";
      break;
    }
    std::vector<TaskProgress> progress;
    for (const TaskRun& run : runs) progress.push_back(run.progress);
    const auto chosen = next_task(campaign.allocation, progress);
    if (!chosen) break;
    TaskRun& run = runs[*chosen];
    const TuneResult& before = run.session->result();
    const std::size_t measured_before = before.history.size();
    const double wall_before = before.wall_seconds;
    // A kernel's first round measures its heuristic alone: the network has a latency after one
    // measurement per kernel, and the allocation starts from every kernel's share of it.
    const std::size_t first_round = run.progress.best_after_round.empty() ? 1 : SIZE_MAX;
    const std::size_t at_most = std::min(first_round, campaign.tuner.max_measurements ? campaign.tuner.max_measurements - t.measurements : SIZE_MAX);
    if (!run.session->step(at_most)) {
      run.progress.finished = true;
      continue;
    }
    const TuneResult& after = run.session->result();
    run.progress.best_after_round.push_back(best_of(*run.session));
    run.progress.spent += time_budget ? after.wall_seconds - wall_before : static_cast<double>(after.history.size() - measured_before);
    // A kernel with nothing that ran after its second round cannot be scheduled on this backend:
    // its heuristic is the fallback and its budget goes elsewhere.
    if (!run.progress.best_after_round.back() && run.progress.best_after_round.size() >= 2) run.progress.finished = true;

    const auto now = totals();
    const auto estimate = latency(false);
    rounds.push_back({{"round", round},
                      {"task", network.tasks[*chosen].kernel.name()},
                      {"measurements", now.measurements},
                      {"tuning_seconds", now.tuning},
                      {"latency_seconds", optional_number(estimate)}});
    write_file_atomically(summary_path, summary(false).dump(1) + "\n");
    if (options.progress) {
      const double share = std::min(budget_share(now), 1.0);
      constexpr int kBar = 20;
      const int filled = static_cast<int>(std::lround(share * kBar));
      std::ostream& out = *options.progress;
      out << "[tune] [" << std::string(filled, '#') << std::string(kBar - filled, '-') << "] " << std::setw(3)
          << std::lround(share * 100) << "%  round " << round + 1 << "  " << network.tasks[*chosen].kernel.name() << " (x"
          << network.tasks[*chosen].instances.size() << ")  network ";
      if (estimate) {
        out << format_seconds(*estimate);
      } else {
        std::size_t timed = 0;
        for (const TaskRun& r : runs) timed += best_of(*r.session) ? 1 : 0;
        out << "? (" << timed << "/" << runs.size() << " kernels timed)";
      }
      if (const auto heuristic = latency(true); heuristic && estimate)
        out << " (heuristic " << format_seconds(*heuristic) << ", " << std::setprecision(3) << *heuristic / *estimate << "x)";
      out << "  measured " << now.measurements;
      if (now.failed) out << " (" << now.failed << " failed)";
      if (share > 0) out << "  " << format_duration(now.tuning * (1 - share) / share) << " left";
      out << std::endl;
    }
  }
  nlohmann::ordered_json result = summary(true);
  write_file_atomically(summary_path, result.dump(1) + "\n");
  return result;
}

}  // namespace perftune
