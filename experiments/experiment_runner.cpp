#include "experiments/experiment_runner.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <deque>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iomanip>
#include <map>
#include <mutex>
#include <optional>
#include <ostream>
#include <set>
#include <sstream>
#include <thread>

#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include "autotuner/campaign/campaign_runner.h"
#include "autotuner/campaign/program_target.h"
#include "autotuner/factories/backend_factory.h"
#include "distributed/ranks.h"
#include "experiments/experiment_plots.h"
#include "experiments/gnuplot.h"
#include "experiments/live/remeasurement.h"
#include "experiments/live/scheduler_comparison.h"
#include "experiments/live/space_peers.h"
#include "experiments/pretraining/pretraining.h"
#include "experiments/scoring/optimum_noise.h"
#include "experiments/scoring/speedup_curves.h"
#include "experiments/scoring/time_axis_score.h"
#include "hardware/wrappers/first_measure_hook.h"
#include "hardware/wrappers/measure_once_backend.h"
#include "ir/file_io.h"
#include "ir/input_error.h"
#include "ir/json_view.h"
#include "ir/output_lock.h"
#include "ir/record_log.h"
#include "ir/source.h"
#include "offline/machine_check.h"
#include "surrogate/training/torch_threads.h"

namespace perftune {

namespace {

namespace fs = std::filesystem;

struct RunTask {
  std::size_t space;
  std::size_t strategy;
  std::uint64_t seed;
  std::string folder;
};

// Where a run's folder records its run_identity (experiment.h), written before the run starts.
fs::path identity_file(const std::string& folder) { return fs::path(folder) / "run_identity"; }

std::string recorded_identity(const std::string& folder) {
  std::ifstream in(identity_file(folder));
  std::string identity;
  in >> identity;
  return identity;
}

// A finished run's summary in `folder`, if it is one of this (space, strategy, seed) as defined now.
std::optional<CampaignSummary> finished_run(const std::string& folder, const Campaign& campaign, const std::string& identity) {
  const fs::path path = fs::path(folder) / "summary.json";
  if (!fs::exists(path) || recorded_identity(folder) != identity) return std::nullopt;
  try {
    CampaignSummary summary = campaign_summary_from_json(parse_json_file(path.string()), path.string());
    if (summary.campaign == campaign.name && summary.seed == campaign.tuner.seed) return summary;
  } catch (const InputError&) {
    // A summary cut short by a kill, or one without the curves: the run resumes from its record log instead.
  }
  return std::nullopt;
}

// A run recorded before runs named their space's files by content (experiment.h) is the same run:
// a folder holding its path-named identity is given the content-named one, so its measurements
// are reused rather than set aside. Once: afterwards an edited program shows as a new identity.
// `path_named` is computed only for a folder that records another identity than `identity` (it
// parses the campaign and hashes its checkpoints again).
void adopt_path_named_identity(const std::string& folder, const std::string& identity,
                               const std::function<std::string()>& path_named) {
  const std::string recorded = recorded_identity(folder);
  if (!recorded.empty() && recorded != identity && recorded == path_named())
    write_file_atomically(identity_file(folder).string(), identity + "\n");
}

// Makes `folder` the home of a run with `identity`. A folder left by a run of another definition
// (or by one from before identities were recorded) is renamed to FOLDER.stale-ID, not deleted: its
// records are measurements someone paid for. An interrupted run of this definition stays, to
// resume from its record log. Returns whether an older definition was moved aside.
bool keep_run_folder(const std::string& folder, const std::string& identity) {
  bool moved = false;
  if (fs::exists(folder)) {
    const std::string old_identity = recorded_identity(folder);
    if (old_identity == identity) return false;
    const std::string stem = folder + std::string(kStaleRunMarker) + (old_identity.empty() ? std::string("unknown") : old_identity);
    std::string aside = stem;
    for (int n = 2; fs::exists(aside); ++n) aside = stem + "-" + std::to_string(n);
    fs::rename(folder, aside);
    moved = true;
  }
  fs::create_directories(folder);
  write_file_atomically(identity_file(folder).string(), identity + "\n");
  return moved;
}

RunCurve curve_of(const RunTask& task, const CampaignSummary& summary) {
  return RunCurve{task.space, task.strategy, task.seed, summary.best_after, summary.hardware_after, summary.search_after};
}

std::string format_duration(double seconds) {
  const long total = static_cast<long>(seconds + 0.5);
  std::ostringstream out;
  if (total >= 3600) out << total / 3600 << "h" << std::setw(2) << std::setfill('0') << (total / 60) % 60 << "m";
  else out << total / 60 << "m" << std::setw(2) << std::setfill('0') << total % 60 << "s";
  return out.str();
}

class ProgressBar {
 public:
  ProgressBar(std::ostream* out, std::size_t total, bool redraws)
      : out_(out), total_(total), redraws_(redraws), start_(std::chrono::steady_clock::now()) {}
  void done_one(std::size_t reused) {
    const std::size_t done = ++done_;
    if (!out_) return;
    // Without redraws, print when `done` crosses a tenth of the runs (and at the end).
    constexpr std::size_t kLines = 10;
    if (!redraws_ && done != total_ && done * kLines / total_ == (done - 1) * kLines / total_) return;
    std::lock_guard<std::mutex> lock(mutex_);
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    const std::size_t ran = done > reused ? done - reused : 0;
    const double eta = ran ? elapsed / static_cast<double>(ran) * static_cast<double>(total_ - done) : 0.0;
    constexpr std::size_t kWidth = 30;
    const std::size_t filled = total_ ? done * kWidth / total_ : kWidth;
    *out_ << (redraws_ ? "\r" : "") << "[experiment] [" << std::string(filled, '#') << std::string(kWidth - filled, '.') << "] " << done << "/"
          << total_ << " runs  elapsed " << format_duration(elapsed) << "  eta " << format_duration(eta) << "   "
          << (redraws_ ? "" : "\n") << std::flush;
    if (redraws_ && done == total_) *out_ << "\n";
  }

 private:
  std::ostream* out_;
  std::size_t total_;
  bool redraws_;
  std::chrono::steady_clock::time_point start_;
  std::atomic<std::size_t> done_{0};
  std::mutex mutex_;
};

void write_runs_csv(const std::string& path, const Experiment& experiment, const std::vector<RunCurve>& runs) {
  std::ostringstream out;
  out << "space,strategy,seed,measurement,best_seconds,hardware_seconds\n" << std::setprecision(9);
  for (const RunCurve& run : runs)
    for (std::size_t i = 0; i < run.best_after.size(); ++i) {
      out << experiment.spaces[run.space].name << "," << experiment.strategies[run.strategy].name << "," << run.seed << ","
          << i + 1 << ",";
      if (run.best_after[i]) out << *run.best_after[i];
      out << "," << (i < run.hardware_after.size() ? run.hardware_after[i] : 0.0) << "\n";
    }
  write_file_atomically(path, out.str());
}

// A live space (null kernel) has no recording: nothing pre-trains on it or for it.
std::vector<SpaceIdentity> space_identities(const Experiment& experiment, const std::vector<const MeasuredKernel*>& kernels) {
  std::vector<SpaceIdentity> identities;
  for (std::size_t s = 0; s < kernels.size(); ++s)
    identities.push_back(kernels[s] ? SpaceIdentity{kernels[s]->kernel.name(), kernels[s]->device, experiment.spaces[s].serves_as_source()}
                                    : SpaceIdentity{});
  return identities;
}

// Every pre-trained model the experiment's strategies need, one per (space, pretrain section) or,
// per_source, one per (source space, section), trained in turn (training seeds libtorch's global
// generator, so concurrent trainings would not be reproducible; under mpirun each rank trains its
// share in turn) or reused from an earlier run. Returns one entry per model for the summary.
nlohmann::ordered_json pretrain_models(const Experiment& experiment, const std::vector<const MeasuredKernel*>& kernels,
                                       std::ostream* progress, Ranks& ranks) {
  const std::vector<SpaceIdentity> identities = space_identities(experiment, kernels);
  // Every model's sources first: a space with nothing to train on fails before any training.
  struct Job {
    const PretrainSpec* spec;
    std::size_t space;
    std::string checkpoint;
    std::vector<std::string> sources;  // space names, or the record logs of "on": "corpus"
    std::vector<const MeasuredKernel*> kernels;
  };
  std::vector<Job> jobs;
  std::set<std::string> planned;
  for (const ExperimentStrategy& strategy : experiment.strategies) {
    if (!strategy.pretrain) continue;
    const PretrainSpec& spec = *strategy.pretrain;
    if (spec.on == "corpus") {  // its record logs are read when it is trained (not when reused)
      Job job{&spec, 0, pretrained_checkpoint_path(experiment.output, "", spec), spec.corpus_written, {}};
      if (planned.insert(job.checkpoint).second) jobs.push_back(std::move(job));
      continue;
    }
    for (std::size_t s = 0; s < experiment.spaces.size(); ++s) {
      if (!experiment.spaces[s].tuned()) continue;  // a source only: nothing is trained for it
      if (!kernels[s])
        throw InputError(spec.file, spec.place,
                         "a recorded space to pre-train for; space " + experiment.spaces[s].name + " ($.spaces[" +
                             std::to_string(s) + "]) is live (a program measured during the experiment)");
      const std::vector<std::size_t> sources = pretraining_sources(identities, s);
      if (sources.empty())
        throw InputError(spec.file, spec.place,
                         "another space of kernel " + identities[s].kernel + " measured on another device than '" +
                             identities[s].device + "' to pre-train on for space " + experiment.spaces[s].name +
                             " ($.spaces[" + std::to_string(s) + "]); the experiment has none");
      // Pooled: the held-out space's model on all its sources. Per source: each source's own model.
      std::vector<std::pair<std::size_t, std::vector<std::size_t>>> models;
      if (spec.per_source)
        for (const std::size_t i : sources) models.push_back({i, {i}});
      else
        models.push_back({s, sources});
      for (const auto& [named, trained_on] : models) {
        Job job{&spec, named, pretrained_checkpoint_path(experiment.output, experiment.spaces[named].name, spec), {}, {}};
        if (!planned.insert(job.checkpoint).second) continue;  // another strategy or held-out space shares it
        for (const std::size_t i : trained_on) {
          job.sources.push_back(experiment.spaces[i].name);
          job.kernels.push_back(kernels[i]);
        }
        jobs.push_back(std::move(job));
      }
    }
  }
  // Under mpirun each rank trains the models it owns: every rank first notes which exist already
  // (the summary says "reused" of those alone), and after training every rank loads them all.
  std::vector<bool> existed;
  for (const Job& job : jobs) existed.push_back(fs::exists(job.checkpoint));
  ranks.barrier();
  const auto ensure = [&](Job& job, std::ostream* out) {
    const bool shared = job.spec->on == "corpus";
    const std::string space = shared ? "corpus" : experiment.spaces[job.space].name;
    if (out) {
      *out << "[experiment] " << (shared ? "model for every space" : job.spec->per_source ? "per-source model" : "model for " + space)
           << " pre-trained on";
      for (const std::string& name : job.sources) *out << " " << name;
      *out << ": " << std::flush;
    }
    std::deque<Corpus> corpora;  // the record logs of an "on": "corpus" model, while it trains
    if (shared && job.kernels.empty() && !fs::exists(job.checkpoint))
      for (std::size_t i = 0; i < job.spec->corpus.size(); ++i) {
        try {
          corpora.push_back(load_source(job.spec->corpus[i]));
        } catch (const std::exception& error) {
          throw InputError(job.spec->file, job.spec->place + ".corpus[" + std::to_string(i) + "]",
                           std::string("a record log to pre-train on: ") + error.what());
        }
        for (const MeasuredKernel& kernel : corpora.back().kernels) job.kernels.push_back(&kernel);
      }
    configure_torch_threads(1);  // as perftune train: one intra-op thread is fastest on a shared machine
    const PretrainedModel model = ensure_pretrained(*job.spec, job.checkpoint, space, job.sources, job.kernels);
    if (shared) job.kernels.clear();  // they pointed into `corpora`
    if (out) {
      if (model.reused) *out << "reused " << job.checkpoint << std::endl;
      else *out << "trained in " << std::setprecision(3) << model.training.value("seconds", 0.0) << " s" << std::endl;
    }
    return std::make_pair(space, model);
  };
  std::vector<std::optional<std::pair<std::string, PretrainedModel>>> models(jobs.size());
  for (std::size_t j = 0; j < jobs.size(); ++j)
    if (ranks.owns(j)) models[j] = ensure(jobs[j], progress);
  ranks.barrier();
  nlohmann::ordered_json entries = nlohmann::ordered_json::array();
  for (std::size_t j = 0; j < jobs.size(); ++j) {
    if (!models[j]) models[j] = ensure(jobs[j], nullptr);  // another rank trained it: load it
    const auto& [space, model] = *models[j];
    entries.push_back({{"space", space},
                       {"per_source", jobs[j].spec->per_source},
                       {"checkpoint", jobs[j].checkpoint},
                       {"sources", model.sources},
                       {"reused", static_cast<bool>(existed[j])},
                       {"training", model.training}});
  }
  return entries;
}

// A live space's baseline from its runs (SpaceBaseline::live): the pooled best-so-far runtimes and
// the random strategy's mean curve. Throws InputError when no run measured a valid runtime.
void complete_live_baseline(SpaceBaseline& baseline, std::size_t space, const Experiment& experiment,
                            const std::vector<Campaign>& campaigns, const std::vector<RunCurve>& curves,
                            const std::vector<std::pair<std::string, std::string>>& kernel_device, std::size_t max_budget) {
  std::vector<const RunCurve*> random_runs;
  for (std::size_t i = 0; i < curves.size(); ++i) {
    if (curves[i].space != space) continue;
    baseline.kernel = kernel_device[i].first;
    baseline.device = kernel_device[i].second;
    for (const auto& best : curves[i].best_after)
      if (best) baseline.values.ok_sorted.push_back(*best);
    if (campaigns[i].strategy.type == "random") random_runs.push_back(&curves[i]);
  }
  if (baseline.values.ok_sorted.empty())
    throw InputError(experiment.file, "$.spaces[" + std::to_string(space) + "]", "a live space where some run measured a valid runtime");
  std::sort(baseline.values.ok_sorted.begin(), baseline.values.ok_sorted.end());
  if (random_runs.empty()) return;
  for (std::size_t b = 1; b <= max_budget; ++b) {
    double sum = 0.0;
    for (const RunCurve* run : random_runs) sum += best_at(*run, baseline.values, b);
    baseline.measured_random.push_back(sum / static_cast<double>(random_runs.size()));
  }
}

// A live space's runs re-measured (experiments/live/remeasurement.h): their picks at the scored budgets
// and the space's fastest configs (the experiment's and each reference's), logged under
// OUTPUT/remeasured/SPACE. Empty when `stop` ended it before every round was measured (a later
// call goes on from the logs). `before_measuring` is called before each round's first measurement.
std::optional<nlohmann::ordered_json> remeasure_live_space(const RemeasurePlan& plan, const Campaign& campaign, std::size_t space,
                                                           const std::string& space_name,
                                                           const std::vector<RunTask>& tasks, const std::vector<Campaign>& campaigns,
                                                           const std::vector<RunCurve>& curves, const std::vector<std::string>& strategies,
                                                           const std::vector<std::size_t>& budgets, const std::string& folder,
                                                           const std::function<bool()>& stop, const std::function<void()>& before_measuring,
                                                           std::ostream* progress) {
  const ProgramTarget target = program_target(campaign);
  const std::vector<std::string> knob_names = target.space->knob_names();
  std::vector<LiveRun> runs;
  for (std::size_t i = 0; i < tasks.size(); ++i) {
    const fs::path log = fs::path(tasks[i].folder) / "records.jsonl";
    // A run that measured no config of the space (Adams2019's sampling times its own schedules) is not re-measured.
    if (curves[i].space != space || !fs::exists(log)) continue;
    runs.push_back(live_run(curves[i].strategy, campaigns[i].strategy.type == "random",
                            space_records(log.string(), target.kernel.key(), knob_names), curves[i].best_after, budgets));
  }
  std::vector<Config> configs = remeasure_candidates(runs, plan.top);
  std::size_t reference_configs = 0;
  for (const std::string& reference : plan.references)
    for (Config& config : remeasure_candidates({reference_run(reference, space_name, target.kernel.key(), knob_names)}, plan.top))
      if (std::find(configs.begin(), configs.end(), config) == configs.end()) {
        configs.push_back(std::move(config));
        ++reference_configs;
      }
  const Remeasured measured = remeasure(target.kernel, *target.space, configs, plan.repeats, folder,
                                        [&] { return std::make_unique<FirstMeasureHook>(make_backend(campaign.backend, Corpus{}, ""), before_measuring); },
                                        stop, progress);
  if (!measured.complete) return std::nullopt;
  if (progress) *progress << "[experiment] re-measuring the peers of " << target.kernel.name() << std::endl;
  const std::optional<nlohmann::ordered_json> peers = remeasured_peers(campaign, folder, plan.repeats, stop);
  if (!peers) return std::nullopt;
  std::vector<std::optional<double>> values;
  for (const auto& rounds : measured.rounds) values.push_back(remeasured_seconds(rounds));
  nlohmann::ordered_json scores = remeasured_scores(runs, configs, values, measured.rounds, strategies, budgets);
  if (!plan.references.empty()) scores["reference_configs"] = reference_configs;
  scores["peers"] = *peers;
  return scores;
}

// Every run of the experiment, seed-major (so a cut-short sitting still covers every pair of space
// and strategy), with its campaign and folder.
struct RunPlan {
  std::vector<RunTask> tasks;
  std::vector<Campaign> campaigns;
};

RunPlan plan_runs(const Experiment& experiment, std::size_t seeds, const std::string& output) {
  RunPlan plan;
  for (std::uint64_t i = 0; i < seeds; ++i)
    for (std::size_t s = 0; s < experiment.spaces.size(); ++s)
      for (std::size_t t = 0; t < experiment.strategies.size() && experiment.spaces[s].tuned(); ++t) {
        const std::uint64_t seed = experiment.first_seed + i;
        const std::string folder =
            (fs::path(output) / "runs" / experiment.spaces[s].name / experiment.strategies[t].name / ("seed_" + std::to_string(seed)))
                .string();
        plan.campaigns.push_back(experiment_campaign(experiment, s, t, seed, folder));
        plan.tasks.push_back({s, t, seed, folder});
      }
  return plan;
}

// Each recorded source of the spaces once, loaded in parallel and shared read-only by every run on
// it. A program source (live: an empty path) is built by each run itself.
std::map<std::string, Corpus> load_space_sources(const std::vector<Campaign>& space_campaigns, std::size_t jobs, std::ostream* progress) {
  std::map<std::string, Corpus> sources;
  for (const Campaign& campaign : space_campaigns)
    if (!campaign.source.path.empty()) sources.try_emplace(campaign.source.path);
  std::vector<std::map<std::string, Corpus>::iterator> pending;
  for (auto it = sources.begin(); it != sources.end(); ++it) pending.push_back(it);
  if (progress) *progress << "[experiment] loading " << pending.size() << " source(s)" << std::endl;
  tbb::task_arena arena(static_cast<int>(jobs));
  arena.execute([&] {
    tbb::parallel_for(std::size_t{0}, pending.size(), [&](std::size_t i) { pending[i]->second = load_source(pending[i]->first); });
  });
  if (progress)
    for (const auto& [path, corpus] : sources)
      for (const std::string& note : corpus.notes) *progress << "[experiment] " << path << ": " << note << std::endl;
  return sources;
}

// What every figure of an experiment's summary means, written into the summary itself.
nlohmann::ordered_json summary_conventions() {
  return {
    {"f_strategy", "mean over seeds of the best valid runtime after b measurements; a run that stopped early keeps its "
                   "last best"},
    {"f_random", "exact expected best of b draws without replacement from every recorded config, failed ones included"},
    {"failed_configs", "a run (random or not) with no valid runtime yet is charged the space's slowest valid runtime"},
    {"live_spaces", "measured during the experiment (nothing recorded): f_random(b) is the random strategy's mean over "
                    "seeds, f_opt the best runtime any run measured, and a run with no valid runtime yet is charged the "
                    "slowest best-so-far of any run"},
    {"score", "P(b) = (f_random(b) - f_strategy(b)) / (f_random(b) - f_opt), averaged over report budgets and spaces"},
    {"time_score", "Kernel Tuner's methodology on the time axis, per window \"p_start-p_end\": P(t) with t the hardware "
                   "seconds charged (a cache's compile + verification + benchmark + framework time) plus the strategy's own "
                   "wall time on this machine (search_after); f_random(t) = the exact expected best of floor(t / c) draws, c "
                   "the space's mean cost per config; averaged over 1001 times from when random search is expected to get "
                   "p_start of the way from the median valid runtime to the optimum to when it gets p_end of the way, then "
                   "over spaces (experiments/scoring/time_axis_score.h)"},
    {"score_standard_error", "standard error of the score over seeds: P(b) is the mean of each run's own P(b), so the "
                             "score is a mean over independent runs (sum over spaces of w_s^2 var_s / n_s, square-rooted); "
                             "on a live space the random baseline's own error is left out"},
    {"speedup", "reference / best: reference is the space's default config, or the median valid runtime where the "
                "space has no default (see each space's \"reference\")"},
    {"speedup_at", "geometric mean over spaces of the median speedup over seeds"},
    {"vs_fastest_scheduler", "on a live space, the fastest of the platform's own schedulers (peers of kind \"scheduler\", "
                             "each at its best settings) over f_strategy(b): above 1 the strategy is faster; per strategy "
                             "the geometric mean over spaces, the lowest, and the spaces at or above 0.95"},
    {"remeasured", "per live space when the experiment asks (\"remeasure\"): each run's best config after each scored "
                   "budget and the space's fastest configs, measured again in rounds (a fresh backend each, the configs "
                   "shuffled), valued at the median of their rounds; P(b) again with f_opt the fastest re-measured config and "
                   "f_random(b) the random runs' picks re-measured, null where those are within two round spreads of f_opt "
                   "(remeasured_score, remeasured_score_at per strategy): the runs' f_opt is the luckiest of thousands of "
                   "single measurements (experiments/live/remeasurement.h). The peers are measured again in the same rounds, and "
                   "vs_fastest_scheduler_remeasured divides the fastest scheduler's median by the mean re-measured pick "
                   "(pick_seconds_at): both from one machine and day, where the runs' own figures come from many sittings"},
    {"machine_checks", "a live experiment on this CPU: before the first measurement of each sitting's runs and of its "
                       "re-measure, the FMA FLOP/s of one core and of the backend's threads and the DRAM triad bandwidth "
                       "on them (perftune calibrate's micro-benchmarks, about 1 s): sittings whose checks differ ran on a "
                       "different machine, whatever their figures say (offline/machine_check.h)"},
    {"noise_ceiling", "per re-measured space (noise_ceiling_at) and averaged like a strategy (remeasured_noise_ceiling): "
                      "the P of runs that measured the space's 10 fastest re-measured configs once each and kept the "
                      "fastest figure, each round standing for such a sitting and the config kept valued at the mean of "
                      "its other rounds: what the machine's noise alone leaves of P"},
    {"optimum_noise", "per recorded space: the relative standard error of the optimum's recorded runtime (from its "
                      "repeats) and how many configs lie within two such standard errors of it (tied_configs, the "
                      "optimum included): the recording does not rank those, so P near 1 there measures noise; the "
                      "score ignores it"}};
}

// Per space, the reference its curves are scored against: a recorded space's default, optimum and
// noise from its recording; a live space's is filled in from its runs. Its recorded kernel, or null.
struct SpaceReferences {
  std::vector<SpaceBaseline> baselines;
  std::vector<const MeasuredKernel*> kernels;
};

SpaceReferences space_references(const Experiment& experiment, const std::vector<Campaign>& space_campaigns,
                                 const std::map<std::string, Corpus>& sources) {
  SpaceReferences references;
  for (std::size_t s = 0; s < experiment.spaces.size(); ++s) {
    const Campaign& campaign = space_campaigns[s];
    if (campaign.source.path.empty()) {
      references.baselines.push_back({experiment.spaces[s].name, "", "", {}, {}, true, {}});  // filled in from its runs
      references.kernels.push_back(nullptr);
      continue;
    }
    const MeasuredKernel& measured = campaign_kernel(sources.at(campaign.source.path), campaign);
    references.kernels.push_back(&measured);
    try {
      SpaceBaseline baseline{experiment.spaces[s].name, measured.kernel.name(), measured.device, recorded_values(measured)};
      baseline.noise = optimum_noise(measured);
      references.baselines.push_back(std::move(baseline));
    } catch (const std::invalid_argument& error) {
      throw InputError(experiment.file, "$.spaces[" + std::to_string(s) + "]", std::string("a space with a valid measurement: ") + error.what());
    }
  }
  return references;
}

// What the experiment needs before anything is written: a seed, and each re-measure reference's output folder.
void check_seeds_and_references(const Experiment& experiment, std::size_t seeds) {
  if (seeds == 0) throw InputError(experiment.file, "$.seeds", "at least one seed");
  if (experiment.remeasure)
    for (std::size_t i = 0; i < experiment.remeasure->references.size(); ++i)
      if (!fs::is_directory(experiment.remeasure->references[i]))
        throw InputError(experiment.file, "$.remeasure.references[" + std::to_string(i) + "]",
                         "the output folder of an experiment on the same spaces (" + experiment.remeasure->references[i] +
                             (path_exists(experiment.remeasure->references[i]) ? " is a file, not a folder)"
                                                                               : " does not exist; a live experiment kept in git is unpacked by "
                                                                                 "scripts/live_sitting)"));
}

// run_experiment's phases, in order, over what they share: the experiment as this sitting runs it,
// the ranks, the runs, and what the earlier phases leave for the later ones.
struct ExperimentSitting {
  const Experiment& experiment;
  const ExperimentOptions& options;
  const std::chrono::steady_clock::time_point started;
  const std::string output;
  const std::size_t seeds, jobs;
  Ranks& ranks;
  std::ostream* const progress;  // rank 0's
  // Set by plan; a per-source or recorded strategy's campaigns again by identify_runs.
  std::vector<RunTask> tasks;
  std::vector<Campaign> campaigns;
  // Set by load_spaces: the recorded sources, and per space its baseline and its recorded kernel (or null).
  std::map<std::string, Corpus> sources;
  std::vector<SpaceBaseline> baselines;
  std::vector<const MeasuredKernel*> space_kernels;
  nlohmann::ordered_json pretraining;
  std::vector<std::string> run_ids;  // set by identify_runs
  // Per run, set by record_run; the counts, by run_or_reuse on this rank and by count_runs over every rank.
  std::vector<RunCurve> curves;
  std::vector<std::optional<double>> default_seconds;
  std::vector<std::pair<std::string, std::string>> kernel_device;
  std::atomic<std::size_t> reused{0}, changed{0}, not_started{0};
  std::uint64_t all_reused = 0, all_changed = 0, all_not_started = 0;
  // Set by prepare_measuring.
  bool live = false;
  std::optional<MeasurementMemo> memo;
  bool on_this_cpu = false;
  std::string checks_file;
  std::function<void()> check_before_runs, check_before_remeasure;
  // Set on rank 0 by complete_baselines, score, add_peers and remeasure_live_spaces.
  std::size_t max_budget = 0;
  std::vector<std::string> strategy_names;
  nlohmann::ordered_json tables;
  nlohmann::ordered_json noise_ceiling;  // over the re-measured spaces, when the experiment re-measures
  nlohmann::ordered_json spaces;

  bool past_stop_time() const;
  void plan();
  void load_spaces();
  void identify_runs();
  void run_owned();
  void prepare_measuring();
  std::optional<CampaignSummary> run_or_reuse(std::size_t i);
  void record_run(std::size_t i, const CampaignSummary& summary);
  void count_runs();
  void read_other_ranks_runs();
  void reference_defaults();
  void complete_baselines();
  void keep_tuned_spaces();
  void score();
  void add_peers();
  std::optional<nlohmann::ordered_json> remeasure_live_spaces();
  nlohmann::ordered_json write_summary();
};

bool ExperimentSitting::past_stop_time() const {
  return options.stop_after_seconds &&
         std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count() > *options.stop_after_seconds;
}

// Every campaign first: a model this build lacks fails now, not after an hour of runs.
void ExperimentSitting::plan() {
  RunPlan planned = plan_runs(experiment, seeds, output);
  tasks = std::move(planned.tasks);
  campaigns = std::move(planned.campaigns);
  for (std::size_t t = 0; t < experiment.strategies.size(); ++t)
    // Pre-trained ones do not exist yet; per-source and recorded ones name their sources later.
    if (!experiment.strategies[t].pretrain && !experiment.strategies[t].models_name_sources()) make_model(campaigns[t].model);
}

// One campaign per space, to load it (a source-only space has no runs, so no campaign of its own).
void ExperimentSitting::load_spaces() {
  std::vector<Campaign> space_campaigns;
  for (std::size_t s = 0; s < experiment.spaces.size(); ++s)
    space_campaigns.push_back(experiment_campaign(experiment, s, 0, experiment.first_seed, output));
  sources = load_space_sources(space_campaigns, jobs, progress);
  SpaceReferences references = space_references(experiment, space_campaigns, sources);
  baselines = std::move(references.baselines);
  space_kernels = std::move(references.kernels);
}

// Each run's identity; a run this rank owns gives its folder the content-named one.
void ExperimentSitting::identify_runs() {
  // Per-source and recorded strategies' runs combine their own space's sources, known only now.
  const std::vector<SpaceIdentity> identities = space_identities(experiment, space_kernels);
  run_ids.resize(tasks.size());
  for (std::size_t i = 0; i < tasks.size(); ++i) {
    const RunTask& task = tasks[i];
    std::optional<std::vector<std::string>> prior_spaces;
    if (experiment.strategies[task.strategy].models_name_sources()) {
      prior_spaces.emplace();
      for (const std::size_t s : pretraining_sources(identities, task.space)) prior_spaces->push_back(experiment.spaces[s].name);
      campaigns[i] = experiment_campaign(experiment, task.space, task.strategy, task.seed, task.folder, &*prior_spaces);
    }
    const std::vector<std::string>* prior = prior_spaces ? &*prior_spaces : nullptr;
    run_ids[i] = run_identity(experiment, task.space, task.strategy, task.seed, prior);
    if (ranks.owns(i))  // its folder is this rank's to write
      adopt_path_named_identity(task.folder, run_ids[i],
                                [&] { return path_named_run_identity(experiment, task.space, task.strategy, task.seed, prior); });
  }
}

// This rank's runs, in parallel (live: one at a time), with a progress bar over them.
void ExperimentSitting::run_owned() {
  curves.resize(tasks.size());
  default_seconds.resize(tasks.size());
  kernel_device.resize(tasks.size());
  std::size_t owned = 0;
  for (std::size_t i = 0; i < tasks.size(); ++i) owned += ranks.owns(i);
  ProgressBar bar(progress, owned, options.progress_redraws);
  prepare_measuring();
  tbb::task_arena arena(live ? 1 : static_cast<int>(jobs));
  arena.execute([&] {
    tbb::parallel_for(std::size_t{0}, tasks.size(), std::size_t{1}, [&](std::size_t i) {
      // One intra-op thread per run: the runs are the parallelism (a learned model's libtorch
      // calls would otherwise each start a pool as wide as the machine).
      if (!ranks.owns(i)) return;  // another rank's run
      if (jobs > 1) configure_torch_threads(1);
      const std::optional<CampaignSummary> summary = run_or_reuse(i);
      if (!summary) return;  // not started: past the stop time
      record_run(i, *summary);
      bar.done_one(reused);
    }, tbb::simple_partitioner());
  });
}

// What the runs measure through: a live experiment's memo, and the machine checks before each phase.
void ExperimentSitting::prepare_measuring() {
  // Live measurements one at a time: two runs timing kernels on the same cores would slow each
  // other down and the curves would measure the contention.
  live = !backend_traits(campaigns.front().backend).recorded;
  // One memo of the live measurements for every run (each rank its own file: one writer per file).
  if (live && experiment.measure_once)
    memo.emplace((fs::path(output) / (ranks.size() > 1 ? "measured_once.rank" + std::to_string(ranks.rank()) + ".jsonl"
                                                       : std::string("measured_once.jsonl"))).string(),
                 experiment.memo_scope);
  // Each phase of this sitting that measures on this CPU is preceded by a machine check
  // (offline/machine_check.h), each rank's in its own file.
  on_this_cpu = campaigns.front().backend.type == "cpu";
  checks_file =
      (fs::path(output) / (ranks.size() > 1 ? "machine_checks.rank" + std::to_string(ranks.rank()) + ".jsonl" : std::string("machine_checks.jsonl")))
          .string();
  const auto machine_check_before = [&](const std::string& phase) -> std::function<void()> {
    if (!on_this_cpu) return [] {};
    return machine_check_hook(phase, campaigns.front().backend.cpu.threads, checks_file, progress);
  };
  check_before_runs = machine_check_before("runs");
  check_before_remeasure = machine_check_before("remeasure");
}

// Run i's summary: its folder's when an earlier sitting finished it, else the run's own. None when
// the sitting is past its stop time: the run is left for the next sitting.
std::optional<CampaignSummary> ExperimentSitting::run_or_reuse(std::size_t i) {
  const RunTask& task = tasks[i];
  std::optional<CampaignSummary> summary = finished_run(task.folder, campaigns[i], run_ids[i]);
  if (summary) {
    ++reused;
  } else {
    if (past_stop_time()) {
      ++not_started;
      return std::nullopt;
    }
    if (keep_run_folder(task.folder, run_ids[i])) ++changed;
    check_before_runs();  // live runs run one at a time (run_owned's arena)
    // A live space's peers are measured once for the space (add_peers), not in every run.
    CampaignRunOptions run_options{task.folder, nullptr, false};
    if (memo)
      run_options.wrap_backend = [&memo = memo](std::unique_ptr<Backend> backend) -> std::unique_ptr<Backend> {
        return std::make_unique<MeasureOnceBackend>(std::move(backend), *memo);
      };
    summary = campaigns[i].source.path.empty() ? run_campaign(campaigns[i], run_options)
                                               : run_campaign(campaigns[i], sources.at(campaigns[i].source.path), run_options);
  }
  return summary;
}

void ExperimentSitting::record_run(std::size_t i, const CampaignSummary& summary) {
  curves[i] = curve_of(tasks[i], summary);
  kernel_device[i] = {summary.kernel, summary.device};
  default_seconds[i] = summary.default_seconds;
}

// Every rank's runs finished (their folders are the results): the counts over every rank.
void ExperimentSitting::count_runs() {
  ranks.barrier();
  all_reused = ranks.sum(reused);
  all_changed = ranks.sum(changed);
  all_not_started = ranks.sum(not_started);
}

// Rank 0 reads the other ranks' runs from their folders.
void ExperimentSitting::read_other_ranks_runs() {
  for (std::size_t i = 0; i < tasks.size(); ++i) {
    if (ranks.owns(i)) continue;
    const std::optional<CampaignSummary> summary = finished_run(tasks[i].folder, campaigns[i], run_ids[i]);
    if (!summary)
      throw std::runtime_error("run " + tasks[i].folder + " of rank " + std::to_string(i % static_cast<std::size_t>(ranks.size())) +
                               " has no finished summary (does every rank see the output folder?)");
    record_run(i, *summary);
  }
}

// Replay: every run reads the same recorded default. Live: each run measured it once; the median
// is the reference, so one noisy measurement does not move every speedup.
void ExperimentSitting::reference_defaults() {
  for (std::size_t s = 0; s < baselines.size(); ++s) {
    std::vector<double> measured;
    for (std::size_t i = 0; i < tasks.size(); ++i)
      if (tasks[i].space == s && default_seconds[i]) measured.push_back(*default_seconds[i]);
    if (!measured.empty()) baselines[s].default_seconds = quantile(measured, 0.5);
  }
}

// The budget the curves are scored up to, and each live tuned space's baseline from its runs.
void ExperimentSitting::complete_baselines() {
  max_budget = experiment.max_measurements();
  if (max_budget == 0)
    for (const RunCurve& run : curves) max_budget = std::max(max_budget, run.best_after.size());
  for (std::size_t s = 0; s < baselines.size(); ++s)
    if (baselines[s].live && experiment.spaces[s].tuned())
      complete_live_baseline(baselines[s], s, experiment, campaigns, curves, kernel_device, max_budget);
}

// The summary lists the tuned spaces only (a source-only space has no runs to summarize).
void ExperimentSitting::keep_tuned_spaces() {
  std::vector<std::size_t> position(baselines.size(), 0);
  std::vector<SpaceBaseline> tuned;
  for (std::size_t s = 0; s < baselines.size(); ++s)
    if (experiment.spaces[s].tuned()) {
      position[s] = tuned.size();
      tuned.push_back(std::move(baselines[s]));
    }
  baselines = std::move(tuned);
  for (RunCurve& curve : curves) curve.space = position[curve.space];
}

// The strategies' scores on the measurement axis and the time axis, and the spaces' rows.
void ExperimentSitting::score() {
  for (const ExperimentStrategy& strategy : experiment.strategies) strategy_names.push_back(strategy.name);
  tables = summarize_curves(baselines, strategy_names, curves, max_budget, experiment.report_budgets);
  add_time_axis_scores(tables, baselines, strategy_names, curves, experiment.time_windows);
  spaces = tables["spaces"];
}

// The platform's own schedulers on each live space, as references beside the strategies.
void ExperimentSitting::add_peers() {
  for (std::size_t s = 0; s < baselines.size(); ++s) {
    const Campaign& campaign = campaigns[s * experiment.strategies.size()];
    if (!campaign.source.path.empty()) continue;
    if (progress) *progress << "[experiment] peers of " << experiment.spaces[s].name << std::endl;
    const auto peers = space_peers(campaign, (fs::path(output) / "peers" / (plot_file_stem(experiment.spaces[s].name) + ".json")).string());
    for (auto& row : spaces)
      if (row.value("name", "") == experiment.spaces[s].name) row["peers"] = peers;
  }
  add_scheduler_comparison(spaces, tables["strategies"], experiment.report_budgets);
}

// Each live space's runs re-measured, scored beside the runs' own figures. When the stop time cut
// it short: the summary of a sitting that stopped early.
std::optional<nlohmann::ordered_json> ExperimentSitting::remeasure_live_spaces() {
  const std::vector<std::size_t> scored = scored_budgets(experiment.report_budgets, max_budget);
  std::vector<nlohmann::ordered_json> remeasured;
  for (std::size_t s = 0; s < baselines.size(); ++s) {
    const Campaign& campaign = campaigns[s * experiment.strategies.size()];
    if (!campaign.source.path.empty()) continue;
    const std::string folder = (fs::path(output) / "remeasured" / plot_file_stem(baselines[s].name)).string();
    const auto scores = remeasure_live_space(*experiment.remeasure, campaign, s, baselines[s].name, tasks, campaigns, curves,
                                             strategy_names, scored, folder, [this] { return past_stop_time(); },
                                             check_before_remeasure, progress);
    if (!scores)
      return nlohmann::ordered_json{{"experiment", experiment.name}, {"stopped_early", true}, {"finished_runs", tasks.size()},
                                    {"runs", tasks.size()}, {"remeasured_spaces", remeasured.size()}};
    for (auto& row : spaces)
      if (row.value("name", "") == baselines[s].name) row["remeasured"] = *scores;
    remeasured.push_back(*scores);
  }
  add_remeasured_scores(tables["strategies"], remeasured, scored);
  if (!remeasured.empty()) noise_ceiling = remeasured_noise_ceiling(remeasured, scored);
  add_scheduler_comparison(spaces, tables["strategies"], scored, ComparisonBasis::kRemeasured);
  return std::nullopt;
}

// Writes OUTPUT/summary.json and returns it.
nlohmann::ordered_json ExperimentSitting::write_summary() {
  nlohmann::ordered_json summary;
  summary["experiment"] = experiment.name;
  summary["description"] = experiment.description;
  summary["file"] = experiment.file;
  summary["seeds"] = seeds;
  summary["first_seed"] = experiment.first_seed;
  summary["max_budget"] = max_budget;
  summary["report_budgets"] = experiment.report_budgets;
  summary["time_windows"] = nlohmann::ordered_json::array();
  for (const TimeWindow& window : experiment.time_windows)
    summary["time_windows"].push_back({{"window", window.label()}, {"p_start", window.start}, {"p_end", window.end}});
  summary["runs"] = tasks.size();
  summary["reused_runs"] = all_reused;
  summary["changed_runs"] = all_changed;
  if (memo)
    summary["measured_once"] = {{"file", memo->path()},
                                {"configs", memo->size()},
                                {"scope", memo->scope() == MemoScope::kSitting ? "sitting" : "experiment"}};
  summary["conventions"] = summary_conventions();
  if (!pretraining.empty()) summary["pretraining"] = pretraining;
  nlohmann::ordered_json sources_only = nlohmann::ordered_json::array();
  for (const ExperimentSpace& space : experiment.spaces)
    if (!space.tuned()) sources_only.push_back(space.name);
  if (!sources_only.empty()) summary["source_only_spaces"] = std::move(sources_only);
  summary["strategies"] = tables["strategies"];
  if (!noise_ceiling.is_null()) summary["remeasured_noise_ceiling"] = std::move(noise_ceiling);
  if (on_this_cpu) summary["machine_checks"] = read_machine_checks(checks_file);
  summary["spaces"] = std::move(spaces);
  const std::string summary_path = (fs::path(output) / "summary.json").string();
  write_file_atomically(summary_path, summary.dump(1) + "\n");
  return summary;
}

}  // namespace

nlohmann::ordered_json run_experiment(const Experiment& configured, const ExperimentOptions& options) {
  // Pre-trained checkpoints live in the output folder actually used, so campaigns must name that one.
  Experiment experiment = configured;
  if (!options.output.empty()) experiment.output = options.output;
  if (options.first_seed) experiment.first_seed = *options.first_seed;
  const auto started = std::chrono::steady_clock::now();
  const std::string output = experiment.output;
  const std::size_t seeds = options.seeds.value_or(experiment.seeds);
  const std::size_t jobs = options.jobs ? options.jobs : std::max(1u, std::thread::hardware_concurrency());
  check_seeds_and_references(experiment, seeds);
  create_output_folder(output);
  // Under mpirun each rank runs its share of the runs; rank 0 reports.
  SingleProcess single_process;
  Ranks& ranks = options.ranks ? *options.ranks : single_process;
  std::ostream* const progress = ranks.rank() == 0 ? options.progress : nullptr;
  ExperimentSitting sitting{.experiment = experiment, .options = options, .started = started, .output = output, .seeds = seeds,
                            .jobs = jobs, .ranks = ranks, .progress = progress};

  sitting.plan();
  sitting.load_spaces();
  sitting.pretraining = pretrain_models(experiment, sitting.space_kernels, progress, ranks);
  sitting.identify_runs();
  sitting.run_owned();
  // Rank 0 reads the other ranks' runs and writes what they share; the other ranks are done.
  sitting.count_runs();
  if (ranks.rank() != 0) return nullptr;
  const std::vector<RunTask>& tasks = sitting.tasks;
  if (sitting.all_not_started > 0)
    return {{"experiment", experiment.name}, {"stopped_early", true}, {"finished_runs", tasks.size() - sitting.all_not_started},
            {"runs", tasks.size()}};
  sitting.read_other_ranks_runs();
  if (progress && sitting.all_changed > 0)
    *progress << "[experiment] " << sitting.all_changed << " run(s) defined differently from their last run were run again (the old ones are kept as "
                      << "runs/.../seed_N.stale-ID)" << std::endl;
  sitting.reference_defaults();

  write_runs_csv((fs::path(output) / "runs.csv").string(), experiment, sitting.curves);
  sitting.complete_baselines();
  sitting.keep_tuned_spaces();
  sitting.score();
  if (sitting.live) {
    sitting.add_peers();
    if (experiment.remeasure)
      if (std::optional<nlohmann::ordered_json> stopped = sitting.remeasure_live_spaces()) return std::move(*stopped);
  }

  nlohmann::ordered_json summary = sitting.write_summary();
  if (options.plots) render_experiment_plots(output);
  return summary;
}

}  // namespace perftune
