// perftune measure PROGRAM.json|MODEL.onnx [--kernel NAME | --as-kernel] [--config JSON | --random N | --autoscheduler NAME]
//                  [--fusion JSON] [--json]
// Measures on this CPU (Halide, hardware/halide/halide_backend.h), or through runner commands (--runner, see
// hardware/command/command_backend.h), and prints one result per config, or the autoscheduler's.
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <memory>
#include <set>

#include "cli/command.h"
#include "hardware/command/command_backend.h"
#include "hardware/halide/autoscheduler_at_best.h"
#include "hardware/halide/cpu_program.h"
#include "hardware/halide/fusion_space.h"
#include "hardware/halide/halide_backend.h"
#include "hardware/halide/halide_schedule.h"
#include "hardware/process/subprocess.h"
#include "ir/fusion.h"
#include "ir/json_view.h"
#include "ir/program_json.h"

namespace perftune::cli {
namespace {

struct MeasureOptions {
  std::string program;
  std::string kernel;
  std::string config;
  std::size_t random = 0;
  std::string fusion = "none";
  std::uint64_t seed = 1;
  double timeout = 60;
  int threads = 0;
  bool as_kernel = false;
  std::string autoscheduler;
  double autoschedule_timeout = 600;
  std::vector<std::string> runners;
  double runner_timeout = 600;
  bool json = false;
};

FusionConfig parse_fusion(const Program& program, const std::string& text) {
  if (text == "none") return FusionConfig::none(program);
  if (text == "greedy") return FusionConfig::greedy_elementwise(program);
  const nlohmann::json json = parse_json_text(text, "--fusion");
  const JsonView view(json, "--fusion");
  FusionConfig fusion = FusionConfig::none(program);
  for (std::size_t i = 0; i < view.size(); ++i) {
    const std::int64_t edge = view.at(i).as_int();
    if (edge < 0 || edge >= static_cast<std::int64_t>(program.edges().size()))
      view.at(i).fail("an edge id below " + std::to_string(program.edges().size()) + " (see perftune inspect)");
    if (!is_fusible(program, program.edges()[edge])) view.at(i).fail("a fusible edge (edge " + std::to_string(edge) + " starts at a parameter)");
    fusion.fused[edge] = true;
  }
  if (!is_legal(program, fusion)) view.fail("edges whose fusion leaves the kernels acyclic");
  return fusion;
}

void add_result_fields(nlohmann::ordered_json& out, const MeasureResult& r) {
  out["status"] = std::string(status_name(r.status));
  out["seconds"] = r.ok() ? nlohmann::ordered_json(r.seconds) : nlohmann::ordered_json(nullptr);
  out["spread"] = r.spread;
  out["repeats"] = r.repeats;
  out["cost"] = r.cost_seconds;
  out["message"] = r.message;
}

// One result as `measure` prints it: status, median, spread, repeats and cost, or why it failed.
std::string result_line(const MeasureResult& r) {
  char line[160];
  if (r.ok())
    std::snprintf(line, sizeof line, "%-14s median %10.3f us  cv %5.2f%%  repeats %2zu  cost %6.2f s", "ok", r.seconds * 1e6,
                  r.spread * 100, r.repeats.size(), r.cost_seconds);
  else
    std::snprintf(line, sizeof line, "%-14s cost %6.2f s", std::string(status_name(r.status)).c_str(), r.cost_seconds);
  return r.ok() ? std::string(line) : std::string(line) + "  " + r.message;
}

// The kernel scheduled by one of Halide's autoschedulers at its best (both machine parameters).
void measure_autoscheduler(const MeasureOptions& o, const Kernel& kernel) {
  if (auto problem = timeout_problem(o.autoschedule_timeout)) throw std::invalid_argument("--autoschedule-timeout: " + *problem);
  HalideBackendOptions options;
  options.run_timeout_seconds = o.timeout;
  options.autoschedule_timeout_seconds = o.autoschedule_timeout;
  options.threads = o.threads;
  HalideBackend backend(options);
  const PeerMeasurement peer = measure_autoscheduler_at_best(backend.peers(), kernel, o.autoscheduler);
  const MeasureResult& r = peer.result;
  if (o.json) {
    nlohmann::ordered_json out;
    out["program"] = o.program;
    out["kernel"] = kernel.name();
    out["key"] = kernel.key();
    out["device"] = backend.fingerprint();
    out["autoscheduler"] = peer.name;
    out["settings"] = peer.settings;
    add_result_fields(out, r);
    print_json(out.dump(2));
  } else {
    std::cout << "kernel " << kernel.name() << " (" << kernel.key() << ") on " << backend.fingerprint() << "\n"
              << peer.name << ", " << peer.settings << "\n  " << result_line(r) << std::endl;
  }
  if (!r.ok()) throw std::runtime_error(peer.name + " failed: " + r.message);
}

void run(const MeasureOptions& o) {
  const Program program = load_cpu_program(o.program);
  const FusionConfig fusion = parse_fusion(program, o.fusion);
  Kernel kernel;
  std::shared_ptr<const SearchSpace> space;
  std::vector<Config> configs;
  if (o.as_kernel) {
    kernel = Kernel(program.name(), program);
    space = std::make_shared<const SearchSpace>(halide_schedule_space(kernel));
    configs.push_back(heuristic_config(*space, kernel));
  } else if (o.kernel.empty()) {
    kernel = Kernel(program.name(), program);
    space = std::make_shared<const SearchSpace>(fusion_space(program, FusionChoices::kPlacements));
    configs.push_back(fusion_space_config(program, *space, fusion));
    if (!space->contains(configs.back()))
      throw std::runtime_error("--fusion " + o.fusion + " fuses a reduction into a non-elementwise consumer or two reductions together, which the CPU backend does not run");
  } else {
    const FusionPlan plan = partition(program, fusion);
    std::string names;
    for (const FusedKernel& k : plan.kernels) {
      if (k.kernel.name() == o.kernel) kernel = k.kernel;
      names += (names.empty() ? "" : ", ") + k.kernel.name();
    }
    if (kernel.key().empty()) throw std::runtime_error("no kernel '" + o.kernel + "' in the partition of " + o.program + "; kernels: " + names);
    space = std::make_shared<const SearchSpace>(halide_schedule_space(kernel));
    configs.push_back(heuristic_config(*space, kernel));
  }
  if (!o.config.empty()) {
    const nlohmann::json json = parse_json_text(o.config, "--config");
    if (!json.is_object()) JsonView(json, "--config").fail("an object {knob: value}");
    try {
      configs = {space->from_json(json)};
    } catch (const std::invalid_argument& error) {
      throw std::runtime_error(std::string("--config: ") + error.what() + " (knobs: " + nlohmann::json(space->knob_names()).dump() + ")");
    }
  } else if (o.random > 0) {
    Rng rng(o.seed);
    std::set<Config> seen;
    configs.clear();
    for (std::size_t attempt = 0; attempt < 50 * o.random && configs.size() < o.random; ++attempt)
      if (Config c = space->sample(rng); seen.insert(c).second) configs.push_back(c);
  }

  for (const auto& [flag, seconds] : {std::pair{"--timeout", o.timeout}, std::pair{"--runner-timeout", o.runner_timeout}})
    if (auto problem = timeout_problem(seconds)) throw std::invalid_argument(std::string(flag) + ": " + *problem);
  if (!o.autoscheduler.empty()) {
    if (!o.runners.empty()) throw std::invalid_argument("--autoscheduler runs Halide on this CPU, not through --runner");
    return measure_autoscheduler(o, kernel);
  }
  std::unique_ptr<Backend> backend;
  if (o.runners.empty()) {
    HalideBackendOptions options;
    options.run_timeout_seconds = o.timeout;
    options.threads = o.threads;
    backend = std::make_unique<HalideBackend>(options);
  } else {
    backend = std::make_unique<CommandBackend>(CommandBackendOptions{o.runners, "runner", o.runner_timeout});
  }
  const auto results = backend->measure(kernel, *space, configs);
  // Printed first (the messages say why), then a failing exit code for scripts: a runner that
  // fails everything must not look like a successful measurement.
  const bool all_failed = !results.empty() && std::none_of(results.begin(), results.end(), [](const MeasureResult& r) { return r.ok(); });
  const auto fail_if_nothing_measured = [&] {
    if (!all_failed) return;
    // The one-line reason names the first failure too: a script reading stderr's last line learns why.
    const MeasureResult& first = results.front();
    const std::string message = first.message.substr(0, first.message.find('\n'));
    throw std::runtime_error("every measurement failed (" + std::to_string(results.size()) + " of " + std::to_string(results.size()) +
                             "); the first: " + std::string(status_name(first.status)) + (message.empty() ? "" : ": " + message));
  };

  if (o.json) {
    nlohmann::ordered_json out;
    out["program"] = o.program;
    out["kernel"] = kernel.name();
    out["key"] = kernel.key();
    out["device"] = backend->fingerprint();
    out["knobs"] = space->knob_names();
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    for (std::size_t i = 0; i < configs.size(); ++i) {
      const MeasureResult& r = results[i];
      nlohmann::ordered_json j;
      j["config"] = space->to_json(configs[i]);
      add_result_fields(j, r);
      list.push_back(std::move(j));
    }
    out["results"] = std::move(list);
    print_json(out.dump(2));
    return fail_if_nothing_measured();
  }
  std::cout << "kernel " << kernel.name() << " (" << kernel.key() << ") on " << backend->fingerprint() << "\n";
  for (std::size_t i = 0; i < configs.size(); ++i) {
    const MeasureResult& r = results[i];
    std::cout << space->to_json(configs[i]).dump() << "\n  " << result_line(r) << "\n";
  }
  std::cout.flush();
  fail_if_nothing_measured();
}

const bool registered = register_command({"measure", "Measure a bundled program, or one kernel of it, on this CPU",
  [](CLI::App& app) {
    auto o = std::make_shared<MeasureOptions>();
    app.add_option("program", o->program, "Program JSON (configs/programs/*.json) or ONNX model (.onnx)")->required()->check(CLI::ExistingFile);
    app.add_flag("--as-kernel", o->as_kernel, "Measure the whole program as ONE fused kernel over its tile space (a kernel definition from a record log or a runner request)");
    app.add_option("--kernel", o->kernel, "Measure this kernel of the partition (by name) over its tile space; default: the whole program over its fusion space");
    auto* config = app.add_option("--config", o->config, "One config as a JSON object {knob: value}; default: the heuristic schedule, or the --fusion decisions");
    app.add_option("--random", o->random, "Measure N random distinct valid configs instead")->excludes(config);
    app.add_option("--fusion", o->fusion, "Fused edges: a JSON list of edge ids, \"greedy\" or \"none\"")->capture_default_str();
    app.add_option("--autoscheduler", o->autoscheduler,
                   "Measure the kernel as this Halide autoscheduler schedules it instead, with Halide's generic machine parameters and this "
                   "machine's, the faster kept (Adams2019: its greedy search where the beam search fails)")
        ->check(CLI::IsMember({"Mullapudi2016", "Li2018", "Adams2019"}))->excludes(config)->excludes("--random");
    app.add_option("--autoschedule-timeout", o->autoschedule_timeout, "Seconds an autoscheduler's search, compile and run may take")->capture_default_str();
    app.add_option("--seed", o->seed, "Seed of --random")->capture_default_str();
    app.add_option("--timeout", o->timeout, "Seconds a config may take (compile + warm-up + repeats) before it counts as a timeout")->capture_default_str();
    app.add_option("--threads", o->threads, "Threads of Halide's pool (default: the machine's cores)");
    app.add_option("--runner", o->runners, "Measure with a user's runner command instead of this CPU (hardware/README.md protocol); repeat for a pool");
    app.add_option("--runner-timeout", o->runner_timeout, "Seconds a runner may take for its share of the batch")->capture_default_str();
    app.add_flag("--json", o->json, "Print the results as JSON");
    app.callback([o] { run(*o); });
  }});

}  // namespace
}  // namespace perftune::cli
