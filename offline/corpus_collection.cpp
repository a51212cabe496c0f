#include "offline/corpus_collection.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <iterator>
#include <map>
#include <memory>
#include <set>

#include "hardware/halide/cpu_program.h"
#include "hardware/halide/fusion_space.h"
#include "hardware/halide/halide_backend_json.h"
#include "hardware/halide/halide_schedule.h"
#include "ir/count_limits.h"
#include "ir/data_path.h"
#include "ir/file_io.h"
#include "ir/fusion_placements.h"
#include "ir/input_error.h"
#include "ir/json_view.h"
#include "ir/kernel.h"
#include "ir/output_lock.h"
#include "ir/program_json.h"
#include "ir/random.h"
#include "ir/record_log.h"

namespace perftune {

namespace {

struct Job {
  Kernel kernel;
  std::shared_ptr<const SearchSpace> space;
  std::vector<Config> configs;
  bool references = true;  // with spec.references: a network block's are not (the fusion task reads none)
};

// `steps` random valid one-knob changes from `config` (fewer where a config has no valid change).
Config random_walk(const SearchSpace& space, Config config, std::uint64_t steps, Rng& rng) {
  for (std::uint64_t step = 0; step < steps; ++step) {
    const std::vector<Config> next = space.one_knob_changes(config);
    if (next.empty()) break;
    config = next[uniform_index(rng, next.size())];
  }
  return config;
}

// Up to n distinct valid configs drawn with `rng` (every config if the space has at most n).
// Where the constraint rejects nearly every draw (the fusion placements of a large program),
// each config is a random walk of valid one-knob changes from `start` instead.
std::vector<Config> distinct_sample(const SearchSpace& space, std::size_t n, Rng& rng, const Config& start) {
  if (const auto size = space.size(100'000); size && *size <= n) return space.enumerate();
  std::set<Config> seen;
  std::vector<Config> out;
  bool walk = false;
  // Each draw is new with probability >= 1 - n/size, so 20n draws suffice unless the space is
  // barely larger than n.
  for (std::size_t attempt = 0; attempt < 20 * n && out.size() < n; ++attempt) {
    Config c = start;
    if (!walk) {
      try {
        c = space.sample(rng);
      } catch (const std::runtime_error&) {
        walk = true;
      }
    }
    if (walk) c = random_walk(space, std::move(c), 1 + uniform_index(rng, 2 * space.dimension()), rng);
    if (seen.insert(c).second) out.push_back(std::move(c));
  }
  return out;
}

// A kernel's schedules to measure: the heuristic one, a share of short random walks from it (one
// to three one-knob changes: the fast region, as an autoscheduler's neighbourhood is in
// Adams2019's training data), and the rest drawn uniformly; distinct, tile_configs_per_kernel in all.
std::vector<Config> schedule_sample(const SearchSpace& space, const Kernel& kernel, const CollectSpec& spec, Rng& rng) {
  const std::size_t n = spec.tile_configs_per_kernel;
  if (n == 0) return {};
  if (const auto size = space.size(100'000); size && *size <= n) return space.enumerate();
  std::set<Config> seen;
  std::vector<Config> out;
  const auto keep = [&](Config c) {
    if (out.size() < n && space.contains(c) && seen.insert(c).second) out.push_back(std::move(c));
  };
  const Config heuristic = heuristic_config(space, kernel);
  if (spec.near_heuristic_share > 0) keep(heuristic);
  const auto near = static_cast<std::size_t>(spec.near_heuristic_share * static_cast<double>(n) + 0.5);
  for (std::size_t attempt = 0; attempt < 20 * near && out.size() < near; ++attempt) {
    keep(random_walk(space, heuristic, 1 + uniform_index(rng, 3), rng));
  }
  for (std::size_t attempt = 0; attempt < 20 * n && out.size() < n; ++attempt) keep(space.sample(rng));
  return out;
}

// A seed per kernel: the plan of one kernel does not change when other programs are added.
std::uint64_t seed_for(std::uint64_t seed, const std::string& key) {
  std::uint64_t h = seed ^ 0x9e3779b97f4a7c15ull;
  for (char c : key) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  return h;
}

// Independent of knob order: a loaded record lists its knobs in whatever order the log reader
// gives them, the plan in its space's order.
std::string record_key(const std::string& device, const std::string& kernel, const std::vector<std::string>& names,
                       const Config& config) {
  std::map<std::string, std::int64_t> values;
  for (std::size_t k = 0; k < names.size() && k < config.values.size(); ++k) values[names[k]] = config.values[k];
  std::string key = device + "|" + kernel;
  for (const auto& [name, value] : values) key += "|" + name + "=" + std::to_string(value);
  return key;
}

// What the log already holds: a rerun measures only what it lacks.
struct LoggedAlready {
  std::set<std::string> measured;    // record keys (record_key)
  std::set<std::string> referenced;  // kernel keys with references on this device
  std::map<std::string, std::vector<std::string>> knobs;  // kernel key -> its definition's knob names
};

LoggedAlready read_logged(const std::string& output, const std::string& device) {
  LoggedAlready logged;
  if (std::filesystem::exists(output)) {
    const LoadedLog log = RecordLog::load(output);
    for (const Record& r : log.records) logged.measured.insert(record_key(r.device, r.kernel_key, r.knob_names, r.config));
    for (const ReferenceRecord& r : log.references)
      if (r.measured.device == device) logged.referenced.insert(r.measured.kernel_key);
    for (const auto& [key, definition] : log.kernels) logged.knobs[key] = definition.space->knob_names();
  }
  return logged;
}

// The plan: kernels by key, in a fixed order, each with the configs to measure of it.
struct CorpusPlanner {
  const CollectSpec& spec;
  const ProposeConfigs& propose;
  std::vector<std::string>& warnings;  // the summary's: kernels left out
  const std::map<std::string, std::vector<std::string>>& logged_knobs;  // the log's kernel definitions' knobs
  std::vector<Job> jobs;
  std::set<std::string> planned_keys;
  // The kernels of the measured whole-program fusion configs, each with the schedules its program
  // configs ran it with; planned last so that a kernel of another program's unfused partition keeps
  // its plan (and a log collected before keeps its plan).
  std::vector<Job> fused_plans;
  std::map<std::string, std::size_t> fused_plan_of;  // kernel key -> fused_plans index

  void add_model_picks(const Kernel& kernel, const SearchSpace& space, std::vector<Config>& configs,
                       std::span<const Config> anchors) const;
  void add_job(Kernel kernel, std::shared_ptr<const SearchSpace> space, std::vector<Config> configs);
  std::shared_ptr<const SearchSpace> tile_space(const Kernel& kernel) const;
  void add_tile_job(const Kernel& kernel);
  void add_fused_kernels(const std::string& path, const Program& program, const SearchSpace& whole_space,
                         const Config& program_config);
  void plan_program(const std::string& path);
  void plan_whole_program(const std::string& path, const Program& program, const std::shared_ptr<const SearchSpace>& whole_space,
                          Rng& rng);
  void plan_greedy_kernels(const CollectSpec::GreedyKernels& selection);
  void plan_network(const std::string& path);
  void plan_networks();
  void plan_fused_kernels();
};

// The model's picks go after a kernel's other configs, so a log collected without them keeps its plan.
void CorpusPlanner::add_model_picks(const Kernel& kernel, const SearchSpace& space, std::vector<Config>& configs,
                                    std::span<const Config> anchors) const {
  if (spec.model_picks_per_kernel == 0) return;
  std::size_t picked = 0;
  for (Config& c : propose(kernel, space, anchors, spec.model_picks_per_kernel)) {
    if (picked == spec.model_picks_per_kernel) break;
    if (!space.contains(c) || std::find(anchors.begin(), anchors.end(), c) != anchors.end()) continue;
    ++picked;
    if (std::find(configs.begin(), configs.end(), c) == configs.end()) configs.push_back(std::move(c));
  }
}

void CorpusPlanner::add_job(Kernel kernel, std::shared_ptr<const SearchSpace> space, std::vector<Config> configs) {
  if (!planned_keys.insert(kernel.key()).second) return;
  jobs.push_back({std::move(kernel), std::move(space), std::move(configs)});
}

// A kernel's schedule space; within the knobs the log defines it over, where it does: a build with a
// knob the log predates plans what the log's build planned, and its records fit the log's definition.
std::shared_ptr<const SearchSpace> CorpusPlanner::tile_space(const Kernel& kernel) const {
  SearchSpace space = halide_schedule_space(kernel);
  if (const auto logged = logged_knobs.find(kernel.key()); logged != logged_knobs.end()) {
    try {
      space = space_within_knobs(space, logged->second);
    } catch (const std::invalid_argument& error) {
      throw std::invalid_argument("the log defines it over other knobs than this build's space has (" + std::string(error.what()) + ")");
    }
  }
  return std::make_shared<const SearchSpace>(std::move(space));
}

// A kernel over its schedule space, with the schedules planned for it (once per key).
void CorpusPlanner::add_tile_job(const Kernel& kernel) {
  if (planned_keys.count(kernel.key())) return;
  auto space = tile_space(kernel);
  Rng kernel_rng(seed_for(spec.seed, kernel.key()));
  std::vector<Config> configs = schedule_sample(*space, kernel, spec, kernel_rng);
  const std::vector<Config> anchors = {unscheduled_config(*space, kernel), heuristic_config(*space, kernel)};
  add_model_picks(kernel, *space, configs, anchors);
  add_job(kernel, std::move(space), std::move(configs));
}

// The kernels `program_config` forms, each joining fused_plans with the schedule the program ran it with.
void CorpusPlanner::add_fused_kernels(const std::string& path, const Program& program, const SearchSpace& whole_space,
                                      const Config& program_config) {
  for (FusedKernel& fused : partition(program, fusion_config_of(program, whole_space, program_config)).kernels) {
    auto [it, added] = fused_plan_of.try_emplace(fused.kernel.key(), fused_plans.size());
    if (added) {
      try {
        auto space = tile_space(fused.kernel);
        fused_plans.push_back({std::move(fused.kernel), std::move(space), {}});
      } catch (const std::exception& error) {
        warnings.push_back(path + ": kernel " + fused.kernel.name() + " left out: " + error.what());
        fused_plan_of.erase(it);
        continue;
      }
    }
    Job& plan = fused_plans[it->second];
    const Config schedule = with_program_placements(plan.kernel, *plan.space, heuristic_config(*plan.space, plan.kernel),
                                                    program, whole_space, program_config);
    if (std::find(plan.configs.begin(), plan.configs.end(), schedule) == plan.configs.end()) plan.configs.push_back(schedule);
  }
}

// The tile spaces of the program's kernels under no fusion and a few sampled fusion configs, then
// the whole program over its fusion space.
void CorpusPlanner::plan_program(const std::string& path) {
  const Program program = load_program_file(path);
  Rng rng(seed_for(spec.seed, content_key(program)));
  std::vector<FusionConfig> variants = {FusionConfig::none(program)};
  std::shared_ptr<const SearchSpace> whole_space;
  try {
    whole_space = std::make_shared<const SearchSpace>(fusion_space(program, FusionChoices::kPlacements));
  } catch (const std::invalid_argument& error) {
    warnings.push_back(path + ": " + error.what());
  }
  if (whole_space) {
    const Config none = fusion_space_config(program, *whole_space, FusionConfig::none(program));
    for (const Config& c : distinct_sample(*whole_space, spec.fusion_variants_per_program, rng, none))
      variants.push_back(fusion_config_of(program, *whole_space, c));
  }
  for (const FusionConfig& variant : variants) {
    for (FusedKernel& fused : partition(program, variant).kernels) {
      try {
        add_tile_job(fused.kernel);
      } catch (const std::exception& error) {
        warnings.push_back(path + ": kernel " + fused.kernel.name() + " left out: " + error.what());
      }
    }
  }
  if (whole_space) plan_whole_program(path, program, whole_space, rng);
}

// The program's no-fusion and greedy configs and sampled ones (`rng` continues the variants' draws).
void CorpusPlanner::plan_whole_program(const std::string& path, const Program& program,
                                       const std::shared_ptr<const SearchSpace>& whole_space, Rng& rng) {
  std::vector<Config> configs = {fusion_space_config(program, *whole_space, FusionConfig::none(program)),
                                 fusion_space_config(program, *whole_space, FusionConfig::greedy_elementwise(program))};
  if (!whole_space->contains(configs[1])) configs.pop_back();  // greedy may fuse a reduction into a broadcast
  const std::vector<Config> anchors = configs;
  if (spec.program_fusion_configs == 0) configs.clear();  // e.g. a log of model picks alone
  for (Config& c : distinct_sample(*whole_space, spec.program_fusion_configs, rng, anchors.front()))
    if (std::find(configs.begin(), configs.end(), c) == configs.end()) configs.push_back(std::move(c));
  for (std::size_t c = 0; c < configs.size() && c < spec.fused_kernel_configs; ++c)
    add_fused_kernels(path, program, *whole_space, configs[c]);
  const Kernel whole(program.name(), program);
  add_model_picks(whole, *whole_space, configs, anchors);
  add_job(whole, whole_space, std::move(configs));
}

// Named kernels of a program under greedy fusion, tile spaces only; an absent file is a warning.
void CorpusPlanner::plan_greedy_kernels(const CollectSpec::GreedyKernels& selection) {
  if (!path_exists(selection.program)) {
    warnings.push_back(selection.program + " is absent (set PERFTUNE_DATA): its " + std::to_string(selection.kernels.size()) +
                       " greedy kernels are skipped");
    return;
  }
  const Program program = load_cpu_program(selection.program);
  const FusionConfig greedy = FusionConfig::greedy_elementwise(program);
  for (const std::string& name : selection.kernels) {
    const auto kernel = find_partition_kernel(program, greedy, name);
    if (!kernel)
      throw InputError(spec.source, "$.greedy_kernels", "kernels of " + selection.program + " under greedy fusion; it has no " + name);
    add_tile_job(*kernel);
  }
}

// A network's distinct kernels as it is tuned (network_partition), tiled; then, with blocks, each
// block over its fusion placements, as a program is.
void CorpusPlanner::plan_network(const std::string& path) {
  const Program program = load_cpu_program(path);
  const std::optional<FusionPlan> plan = network_partition(program);
  if (!plan) {
    warnings.push_back(path + ": its greedy fusion is not one the CPU backend runs; the network is left out");
    return;
  }
  for (const FusedKernel& fused : plan->kernels) {
    try {
      add_tile_job(fused.kernel);
    } catch (const std::exception& error) {
      warnings.push_back(path + ": kernel " + fused.kernel.name() + " left out: " + error.what());
    }
  }
  if (spec.network_block_kernels == 0) return;
  for (const Program& block : network_blocks(program, *plan, spec.network_block_kernels)) {
    const std::string key = content_key(block);
    if (planned_keys.count(key)) continue;  // ResNet's repeated blocks are measured once
    std::shared_ptr<const SearchSpace> whole_space;
    try {
      whole_space = std::make_shared<const SearchSpace>(fusion_space(block, FusionChoices::kPlacements));
    } catch (const std::invalid_argument&) {
      continue;  // a block without a fusible edge has one placement: nothing to rank
    }
    Rng rng(seed_for(spec.seed, key));
    plan_whole_program(path, block, whole_space, rng);
    if (jobs.back().kernel.key() == key) jobs.back().references = false;  // an autoscheduler's search over a block costs minutes
  }
}

// The networks' jobs taken in turn, one of each network at a time: a sitting that ends early has
// measured some of every network's kernels, not all of the first networks'.
void CorpusPlanner::plan_networks() {
  const std::size_t first = jobs.size();
  std::vector<std::vector<Job>> of_network;
  for (const std::string& path : spec.measure_held_out_networks ? spec.held_out_networks : spec.networks) {
    plan_network(path);
    of_network.emplace_back(std::make_move_iterator(jobs.begin() + static_cast<long>(first)), std::make_move_iterator(jobs.end()));
    jobs.resize(first);
  }
  for (std::size_t turn = 0, left = 1; left > 0; ++turn) {
    left = 0;
    for (std::vector<Job>& network : of_network)
      if (turn < network.size()) {
        jobs.push_back(std::move(network[turn]));
        ++left;
      }
  }
}

void CorpusPlanner::plan_fused_kernels() {
  for (Job& plan : fused_plans) {
    // Most fused kernels run under one schedule in all sampled placements, and a kernel needs at
    // least two to teach a ranking: walks of 1-3 knob changes from the program's schedule (which
    // move its placements and tiles) top it up.
    Rng walk_rng(seed_for(spec.seed, "fused " + plan.kernel.key()));
    const Config start = plan.configs.front();
    for (std::size_t attempt = 0; attempt < 20 * spec.fused_kernel_schedules && plan.configs.size() < spec.fused_kernel_schedules;
         ++attempt) {
      Config c = random_walk(*plan.space, start, 1 + uniform_index(walk_rng, 3), walk_rng);
      if (std::find(plan.configs.begin(), plan.configs.end(), c) == plan.configs.end()) plan.configs.push_back(std::move(c));
    }
    add_job(std::move(plan.kernel), std::move(plan.space), std::move(plan.configs));
  }
}

// Programs first, then the greedy kernels, the networks' kernels and blocks, and the fused kernels
// of the programs' and blocks' configs.
std::vector<Job> plan_of(const CollectSpec& spec, const ProposeConfigs& propose, std::vector<std::string>& warnings,
                         const std::map<std::string, std::vector<std::string>>& logged_knobs) {
  CorpusPlanner planner{spec, propose, warnings, logged_knobs};
  for (const std::string& path : spec.programs) planner.plan_program(path);
  for (const CollectSpec::GreedyKernels& selection : spec.greedy_kernels) planner.plan_greedy_kernels(selection);
  planner.plan_networks();
  planner.plan_fused_kernels();
  return std::move(planner.jobs);
}

// The plan, less every kernel (by content key) the held-out networks' own plan has: so that no
// kernel, tiled or whole, is on both sides of the split.
std::vector<Job> plan_jobs(const CollectSpec& spec, const ProposeConfigs& propose, const LoggedAlready& logged, CollectSummary& summary) {
  std::vector<Job> jobs = plan_of(spec, propose, summary.warnings, logged.knobs);
  if (spec.measure_held_out_networks || spec.held_out_networks.empty()) return jobs;
  CollectSpec held_out = spec;
  held_out.programs.clear();
  held_out.greedy_kernels.clear();
  held_out.measure_held_out_networks = true;
  held_out.model_picks_per_kernel = 0;  // only the kernels count, not their configs
  std::vector<std::string> ignored;      // the held-out side's warnings are its own collection's
  std::set<std::string> held_out_keys;
  for (const Job& job : plan_of(held_out, {}, ignored, {})) held_out_keys.insert(job.kernel.key());
  const auto shared = [&](const Job& job) { return held_out_keys.count(job.kernel.key()) > 0; };
  summary.held_out_kernels = static_cast<std::size_t>(std::count_if(jobs.begin(), jobs.end(), shared));
  jobs.erase(std::remove_if(jobs.begin(), jobs.end(), shared), jobs.end());
  return jobs;
}

// Leaves each job the configs the log lacks; counts the skipped, the planned and the kernels whose
// references are to measure.
void skip_logged(std::vector<Job>& jobs, const LoggedAlready& logged, const std::string& device, bool references,
                 CollectSummary& summary) {
  for (Job& job : jobs) {
    std::vector<Config> todo;
    const auto knob_names = job.space->knob_names();
    for (const Config& c : job.configs) {
      if (logged.measured.count(record_key(device, job.kernel.key(), knob_names, c))) ++summary.skipped;
      else todo.push_back(c);
    }
    job.configs = std::move(todo);
    summary.planned += job.configs.size();
    if (references && job.references && !logged.referenced.count(job.kernel.key())) ++summary.reference_kernels;
  }
}

// Measures the plan into the log, job by job, reporting progress after each batch.
struct CorpusMeasurer {
  const CollectSpec& spec;
  Backend& backend;
  const std::string& device;
  const std::set<std::string>& referenced;  // kernel keys with references on this device
  RecordLog& log;
  CollectSummary& summary;
  const std::function<void(const CollectProgress&)>& progress;
  std::chrono::steady_clock::time_point start;
  CollectProgress state;

  void measure(const Job& job);
  void measure_references(const Job& job);
  void measure_batch(const Job& job, const std::vector<Config>& batch);
};

void CorpusMeasurer::measure(const Job& job) {
  if (job.configs.empty()) return;
  log.define_kernel(job.kernel, *job.space);
  for (std::size_t begin = 0; begin < job.configs.size(); begin += spec.batch_size) {
    const std::size_t end = std::min(job.configs.size(), begin + spec.batch_size);
    const std::vector<Config> batch(job.configs.begin() + static_cast<long>(begin), job.configs.begin() + static_cast<long>(end));
    measure_batch(job, batch);
  }
}

// An autoscheduler's search can take a minute a kernel, far more than its configs: the references
// come after every job's configs, so a sitting that ends early leaves whole kernels to train on.
void CorpusMeasurer::measure_references(const Job& job) {
  if (!spec.references || !job.references || referenced.count(job.kernel.key())) return;
  log.define_kernel(job.kernel, *job.space);
  for (const PeerMeasurement& peer : backend.measure_peers(job.kernel))
    log.append(ReferenceRecord{{device, job.kernel.key(), job.kernel.name(), {}, {}, peer.result, unix_now()}, peer.name, peer.settings});
  ++state.references_done;
  state.elapsed_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (progress) progress(state);
}

void CorpusMeasurer::measure_batch(const Job& job, const std::vector<Config>& batch) {
  const auto results = backend.measure(job.kernel, *job.space, batch);
  for (std::size_t i = 0; i < batch.size(); ++i) {
    Record record;
    record.device = device;
    record.kernel_key = job.kernel.key();
    record.kernel_name = job.kernel.name();
    record.knob_names = job.space->knob_names();
    record.config = batch[i];
    record.result = results[i];
    record.unix_time = unix_now();
    log.append(record);
    ++summary.measured;
    if (!results[i].ok()) ++summary.failed;
  }
  state.done = summary.measured;
  state.failed = summary.failed;
  state.elapsed_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (progress) progress(state);
}

}  // namespace

const SettingsTable<CollectSpec>& collect_settings() {
  using S = CollectSpec;
  // A count no plan outgrows: kMaxConfigsPerKernel, with its reason (ir/count_limits.h).
  const auto configs = [](std::size_t S::*member) {
    return [member](const JsonView& v, S& s) { s.*member = static_cast<std::size_t>(bounded_count(v, 0, kMaxConfigsPerKernel, "configs")); };
  };
  const auto limit = std::to_string(kMaxConfigsPerKernel);
  const S defaults;
  static const auto table =
      SettingsTable<S>()
          .custom("output", "path, required", "none", "the corpus record log (JSON lines), appended to and resumed",
                  [](const JsonView& v, S& s) { s.output = v.as_string(); })
          .custom("description", "text", "none", "what the collection is for", [](const JsonView&, S&) {})
          .custom("seed", "integer", "1", "the sampler's seed", [](const JsonView& v, S& s) { s.seed = static_cast<std::uint64_t>(v.as_int()); })
          .custom("programs", "list of paths; required without networks", "none", "program files, or folders of them (*.json, in name order)",
                  [](const JsonView&, S&) {})  // read by load_collect_spec: paths resolve against the file's folder
          .custom("greedy_kernels", "list of {program, kernels}", "none", "named kernels of a program's greedy fusion, tiled too",
                  [](const JsonView&, S&) {})
          .custom("networks", "{train, held_out, measure, block_kernels}", "none",
                  "networks cut into kernels (tiled) and blocks (placements); measure: train or held_out (the test corpus)",
                  [](const JsonView&, S&) {})
          .custom("tile_configs_per_kernel", "0.." + limit, std::to_string(defaults.tile_configs_per_kernel),
                  "schedules sampled per kernel's tile space", configs(&S::tile_configs_per_kernel))
          .custom("near_heuristic_share", "[0, 1]", setting_number_text(defaults.near_heuristic_share),
                  "of those, random walks of 1-3 knob changes from the heuristic schedule",
                  [](const JsonView& v, S& s) {
                    s.near_heuristic_share = v.as_number();
                    if (!(s.near_heuristic_share >= 0 && s.near_heuristic_share <= 1)) v.fail("a share between 0 and 1");
                  })
          .custom("fusion_variants_per_program", "0.." + limit, std::to_string(defaults.fusion_variants_per_program),
                  "fusion decisions per program whose kernels are tiled", configs(&S::fusion_variants_per_program))
          .custom("program_fusion_configs", "0.." + limit, std::to_string(defaults.program_fusion_configs),
                  "whole-program fusion configs measured per program", configs(&S::program_fusion_configs))
          .custom("fused_kernel_configs", "0.." + limit, std::to_string(defaults.fused_kernel_configs),
                  "fused kernels of sampled placements, measured as kernels", configs(&S::fused_kernel_configs))
          .custom("fused_kernel_schedules", "0.." + limit, std::to_string(defaults.fused_kernel_schedules),
                  "each of those kernels topped up to this many schedules", configs(&S::fused_kernel_schedules))
          .count("batch_size", &S::batch_size, "configs per backend call")
          .flag("references", &S::references, "also time each kernel as the autoschedulers and the library run it")
          .custom("model_picks", "{\"per_kernel\": 1.." + limit + ", \"model\", \"strategy\"}", "none",
                  "also the given model's first picks per kernel (autotuner/model_picks.h reads model and strategy)",
                  [](const JsonView& v, S& s) {
                    s.model_picks_per_kernel = static_cast<std::size_t>(bounded_count(v.at("per_kernel"), 1, kMaxConfigsPerKernel, "configs"));
                    s.model_picks = v.value();
                  })
          .custom("cpu", "object", "the cpu backend's defaults", "the live CPU backend's options (its section above)",
                  [](const JsonView& v, S& s) { halide_backend_settings().read(v, s.cpu); });
  return table;
}

CollectSpec load_collect_spec(const std::string& path) {
  const nlohmann::json json = parse_json_file(path);
  const JsonView root(json, path);
  CollectSpec spec;
  spec.source = path;
  collect_settings().read(root, spec);
  (void)root.at("output");
  const auto folder = std::filesystem::path(path).parent_path();
  if (const auto networks = root.find("networks")) {
    networks->expect_keys({"train", "held_out", "measure", "block_kernels"});
    for (const char* side : {"train", "held_out"}) {
      const auto paths = networks->find(side);
      if (!paths) continue;
      for (const JsonView& entry : paths->elements()) {
        const auto file = (folder / entry.as_string()).lexically_normal();
        if (!std::filesystem::is_regular_file(file)) entry.fail("an existing network program file (relative to " + folder.string() + ")");
        (std::string(side) == "train" ? spec.networks : spec.held_out_networks).push_back(file.string());
      }
    }
    if (spec.networks.empty()) networks->fail("at least one training network (\"train\")");
    if (const auto measure = networks->find("measure")) {
      const std::string side = measure->as_string();
      if (side != "train" && side != "held_out") measure->fail("\"train\" or \"held_out\"");
      spec.measure_held_out_networks = side == "held_out";
      if (spec.measure_held_out_networks && spec.held_out_networks.empty()) measure->fail("held-out networks to measure (\"held_out\")");
    }
    if (const auto blocks = networks->find("block_kernels"))
      spec.network_block_kernels = static_cast<std::size_t>(bounded_count(*blocks, 0, 1000, "kernels"));
  }
  if (root.has("programs") || spec.networks.empty()) {  // programs are required without networks
    const JsonView programs = root.at("programs");
    if (programs.size() == 0) programs.fail("at least one program file or folder");
    for (std::size_t i = 0; i < programs.size(); ++i) {
      const auto file = folder / programs.at(i).as_string();
      if (!path_exists(file.string()))
        programs.at(i).fail("an existing program file or folder of them (relative to " + folder.string() + ")");
      if (!std::filesystem::is_directory(file)) {
        spec.programs.push_back(file.lexically_normal().string());
        continue;
      }
      // A folder (e.g. what perftune generate wrote): its *.json files in name order.
      std::vector<std::string> found;
      for (const auto& entry : std::filesystem::directory_iterator(file))
        if (entry.is_regular_file() && entry.path().extension() == ".json") found.push_back(entry.path().lexically_normal().string());
      if (found.empty()) programs.at(i).fail("a folder with program files (*.json)");
      std::sort(found.begin(), found.end());
      spec.programs.insert(spec.programs.end(), found.begin(), found.end());
    }
  }
  if (auto greedy = root.find("greedy_kernels")) {
    for (const JsonView& entry : greedy->elements()) {
      entry.expect_keys({"program", "kernels"});
      CollectSpec::GreedyKernels selection{resolve_config_path(entry.at("program").as_string(), folder.string()),
                                           entry.at("kernels").as_string_list()};
      if (selection.kernels.empty()) entry.at("kernels").fail("at least one kernel name");
      spec.greedy_kernels.push_back(std::move(selection));
    }
  }
  return spec;
}

CollectSummary collect_corpus(const CollectSpec& spec, Backend& backend,
                              const std::function<void(const CollectProgress&)>& progress, const ProposeConfigs& propose) {
  if (spec.model_picks_per_kernel > 0 && !propose)
    throw std::invalid_argument("collect_corpus: " + spec.source + " asks for model_picks, and no proposer was given");
  const auto start = std::chrono::steady_clock::now();
  CollectSummary summary;
  const std::string device = backend.fingerprint();

  // One collector per log: a second one would measure every planned config again into it.
  if (const auto parent = std::filesystem::path(spec.output).parent_path(); !parent.empty())
    std::filesystem::create_directories(parent);
  const OutputLock lock(spec.output + ".lock", "the corpus log " + spec.output);
  const LoggedAlready logged = read_logged(spec.output, device);

  std::vector<Job> jobs = plan_jobs(spec, propose, logged, summary);
  summary.kernels = jobs.size();
  skip_logged(jobs, logged, device, spec.references, summary);
  if (spec.plan_only) return summary;

  RecordLog log(spec.output);
  CorpusMeasurer measurer{spec, backend, device, logged.referenced, log, summary, progress, start, {.planned = summary.planned, .references_planned = summary.reference_kernels}};
  for (const Job& job : jobs) measurer.measure(job);
  for (const Job& job : jobs) measurer.measure_references(job);
  summary.log_records = RecordLog::load(spec.output).records.size();
  summary.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return summary;
}

std::string progress_bar(const CollectProgress& p, std::size_t width) {
  const double fraction = p.planned ? static_cast<double>(p.done) / static_cast<double>(p.planned) : 1.0;
  const std::size_t filled = static_cast<std::size_t>(fraction * static_cast<double>(width));
  std::string bar = "[" + std::string(filled, '#') + std::string(width - std::min(filled, width), '.') + "] ";
  bar += std::to_string(p.done) + "/" + std::to_string(p.planned) + " records  " + std::to_string(p.failed) + " failed";
  if (p.elapsed_seconds > 0 && p.done > 0) {
    const double per_minute = 60.0 * static_cast<double>(p.done) / p.elapsed_seconds;
    const long eta = static_cast<long>(static_cast<double>(p.planned - p.done) * p.elapsed_seconds / static_cast<double>(p.done));
    char text[64];
    std::snprintf(text, sizeof text, "  %.1f/min  eta %ldm%02lds", per_minute, eta / 60, eta % 60);
    bar += text;
  }
  if (p.references_planned > 0 && p.done == p.planned)
    bar += "  references " + std::to_string(p.references_done) + "/" + std::to_string(p.references_planned);
  return bar;
}

}  // namespace perftune
