// perftune_halide_runner: the child process in which the live CPU backend compiles and runs
// Halide pipelines, so that a schedule that crashes the compiler or the kernel, hangs, or runs out
// of memory costs one measurement, not the campaign (the backend kills and restarts it).
//
//   perftune_halide_runner THREADS [MEMORY_LIMIT_BYTES]
//
// A worker: it reads one JSON request per line on stdin and answers one JSON line on stdout.
// Request:
//   {"program": {...perftune program...}, "schedule": {"tile.out.0": 64, ...}      a config, or
//    "autoscheduler": {"name": "Adams2019", "machine": "16,16777216,40", "env": {"HL_SEED": "3"}},
//    "seed": 1, "outputs": "PATH",
//    "timing": {"min_repeats": 5, "max_repeats": 30, "target_cv": 0.02, "budget": 1, "min_sample": 0.001}}
// Reply: {"status": "ok", "compile_seconds": C, "repeats": [T1, ...]} (an autoscheduler's also
// "schedule": a hash of the schedule it wrote, to tell its samples apart; with THREADS > 1 also
// "attempts" and "parallel_ratio", and "disturbed": true when every attempt was, see
// hardware/timing/parallel_guard.h; a request's "parallel_guard": N caps the attempts, 0 = no guard), or {"status":
// "compile_error" | "invalid_config" | "runtime_error", "message": "..."}.
// Compiling and running can also be two requests, so that two workers compile a batch in
// parallel and then run it one at a time: a request with "keep": ID only compiles (reply
// {"status": "ok", "compile_seconds": C}) and keeps the pipeline; {"run": ID, "seed", "outputs",
// "timing"} runs it as above and forgets it.
// It lowers the program (halide/lowering.h), applies the schedule (halide/apply_schedule.h) or
// runs the named autoscheduler on it, JIT-compiles for this CPU, fills the inputs (input_data.h),
// runs once (warm-up), writes the outputs as raw f32 to PATH for the backend to check against the
// reference interpreter, then times it (hardware/timing/sample_timer.h), with freed memory reused from
// call to call (hardware/timing/steady_memory.h).
// With PERFTUNE_HALIDE_STMT=FILE in its environment it also writes each pipeline's lowered loop
// nest to FILE (the last one compiled wins), to see what a config became; with
// PERFTUNE_HALIDE_ASM=FILE, its assembly (register spills show there); with
// PERFTUNE_HALIDE_SCHEDULE=FILE, an autoscheduler's schedule source (the last one wins).
// A request with "loop_nest": true stops after lowering (no code generation, so much cheaper) and replies
// {"status": "ok", "loop_nest": [...], "compile_seconds": C}: the statistics of the loop nest its
// config or autoscheduler produced (hardware/halide/loop_nest_features.h).
#include <Halide.h>
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <variant>

#include <nlohmann/json.hpp>

#include "hardware/halide/halide_schedule.h"
#include "hardware/halide/worker/apply_schedule.h"
#include "hardware/halide/worker/loop_nest_stats.h"
#include "hardware/halide/worker/lowering.h"
#include "hardware/halide/worker/parallel_probe.h"
#include "hardware/reference/input_data.h"
#include "hardware/reference/op_semantics.h"
#include "hardware/timing/parallel_guard.h"
#include "hardware/timing/sample_timer.h"
#include "hardware/timing/steady_memory.h"
#include "ir/json_view.h"
#include "ir/program_json.h"
#include "ir/stable_hash.h"

namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::json;
using perftune::OpId;
using perftune::Program;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

std::vector<int> halide_sizes(const std::vector<std::int64_t>& dims) {
  std::vector<int> sizes;
  for (auto it = dims.rbegin(); it != dims.rend(); ++it) sizes.push_back(static_cast<int>(*it));
  return sizes;
}

// Buffer memory as Halide::Runtime::Buffer allocates it (128-byte aligned, whole 128-byte
// lines), but from operator new, so that an allocation over the memory limit throws
// std::bad_alloc (a runtime_error reply) instead of handing Halide a null pointer.
struct AlignedDelete {
  void operator()(float* p) const { ::operator delete[](p, std::align_val_t{128}); }
};
using Storage = std::unique_ptr<float[], AlignedDelete>;

Halide::Buffer<float> buffer_of(const std::vector<std::int64_t>& dims, std::vector<Storage>& storage) {
  if (dims.empty()) return Halide::Buffer<float>::make_scalar();
  std::size_t bytes = sizeof(float);
  for (std::int64_t d : dims) bytes *= static_cast<std::size_t>(d);
  bytes = (bytes + 127) / 128 * 128;
  storage.emplace_back(static_cast<float*>(::operator new[](bytes, std::align_val_t{128})));
  return Halide::Buffer<float>(storage.back().get(), halide_sizes(dims));
}

// Autoscheduler plugins, each loaded once per process.
void load_autoscheduler(const std::string& name) {
  static std::set<std::string> loaded;
  if (loaded.count(name)) return;
  std::string file = name;
  for (char& c : file) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  Halide::load_plugin(std::string(PERFTUNE_HALIDE_PLUGIN_DIR) + "/libautoschedule_" + file + ".so");
  loaded.insert(name);
}

json failure(const std::string& status, const std::string& message) { return {{"status", status}, {"message", message}}; }

// A pipeline lowered, scheduled and JIT-compiled, ready to run.
struct Compiled {
  Program body;
  perftune::halide::LoweredKernel lowered;
  perftune::halide::ScheduledPipeline scheduled;
  Halide::Target target;
  double compile_seconds = 0;
  std::string schedule_hash;  // an autoscheduler's schedule source, hashed; empty for a config
};

// The request's program under its schedule or autoscheduler, compiled; or the reply itself: a
// failure, or a loop-nest request's statistics.
std::variant<std::unique_ptr<Compiled>, json> compile(const json& request) {
  auto compiled = std::make_unique<Compiled>();
  compiled->body = perftune::program_from_json(perftune::JsonView(request.at("program"), "request", "$.program"));
  const Program& body = compiled->body;
  perftune::halide::LoweredKernel& lowered = compiled->lowered;
  // A config's schedule is read first: the packed operands it asks for are part of the lowering.
  std::optional<perftune::HalideSchedule> schedule;
  if (request.contains("schedule")) {
    std::map<std::string, std::int64_t> knobs;
    for (const auto& [name, value] : request.at("schedule").items()) knobs[name] = value.get<std::int64_t>();
    try {
      schedule = perftune::schedule_from_knobs(body, knobs);
    } catch (const std::invalid_argument& error) {
      return failure("invalid_config", error.what());
    }
  }
  try {
    lowered = perftune::halide::lower(body, schedule ? schedule->panels : std::map<perftune::OpId, perftune::Panels>{});
  } catch (const perftune::UnsupportedProgram& error) {
    return failure("invalid_config", error.what());
  }
  const auto compile_start = Clock::now();
  perftune::halide::ScheduledPipeline& scheduled = compiled->scheduled;
  const Halide::Target target = compiled->target = Halide::get_jit_target_from_environment();
  try {
    if (schedule) {
      scheduled = perftune::halide::apply_schedule(lowered, body, *schedule);
    } else {
      const json& spec = request.at("autoscheduler");
      const std::string name = spec.at("name").get<std::string>();
      load_autoscheduler(name);
      scheduled = perftune::halide::unscheduled_pipeline(lowered, body);
      perftune::halide::set_shape_estimates(lowered, body, scheduled.outputs);
      std::vector<std::string> set;
      if (spec.contains("env"))
        for (const auto& [key, value] : spec.at("env").items()) {
          setenv(key.c_str(), value.get<std::string>().c_str(), 1);
          set.push_back(key);
        }
      const Halide::MachineParams machine(spec.at("machine").get<std::string>());
      const std::string source = scheduled.pipeline.auto_schedule(name, target, machine).schedule_source;
      compiled->schedule_hash = perftune::stable_hash_hex(source);
      if (const char* file = std::getenv("PERFTUNE_HALIDE_SCHEDULE")) std::ofstream(file) << source;
      for (const std::string& key : set) unsetenv(key.c_str());
    }
    std::vector<Halide::Argument> arguments;
    for (const Halide::ImageParam& input : lowered.inputs) arguments.push_back(input);
    // A loop-nest request stops at the lowered module: its statistics are the reply.
    if (request.value("loop_nest", false)) {
      const Halide::Module module = scheduled.pipeline.compile_to_module(arguments, "perftune_loop_nest", target);
      const auto row = perftune::halide::loop_nest_stats(module, "perftune_loop_nest");
      return json{{"status", "ok"}, {"loop_nest", row}, {"compile_seconds", seconds_since(compile_start)}};
    }
    // For a person reading what a schedule became: the loop nest, as Halide's lowered statement.
    if (const char* stmt = std::getenv("PERFTUNE_HALIDE_STMT")) {
      scheduled.pipeline.compile_to_lowered_stmt(stmt, arguments, Halide::StmtOutputFormat::Text, target);
    }
    if (const char* assembly = std::getenv("PERFTUNE_HALIDE_ASM")) scheduled.pipeline.compile_to_assembly(assembly, arguments, "kernel", target);
    scheduled.pipeline.compile_jit(target);
  } catch (const Halide::CompileError& error) {
    return failure("compile_error", error.what());
  } catch (const Halide::InternalError& error) {
    return failure("compile_error", std::string("Halide internal error: ") + error.what());
  } catch (const Halide::Error& error) {
    return failure("compile_error", error.what());
  }
  compiled->compile_seconds = seconds_since(compile_start);
  return compiled;
}

// The thread count this worker was started with (its first argument).
int worker_threads = 1;
perftune::halide::ParallelProbe probe;

// Runs a compiled pipeline: inputs, warm-up, outputs written for the check, timing (guarded when
// the worker has several threads).
json run(Compiled& compiled, const json& request) {
  const Program& body = compiled.body;
  perftune::halide::LoweredKernel& lowered = compiled.lowered;
  Halide::Pipeline& pipeline = compiled.scheduled.pipeline;
  const Halide::Target& target = compiled.target;
  const std::uint64_t seed = request.value("seed", std::uint64_t{1});
  std::vector<Storage> storage;  // the buffers' memory, for this run
  for (std::size_t i = 0; i < lowered.inputs.size(); ++i) {
    const auto& dims = body.op(lowered.input_ops[i]).shape.dims;
    Halide::Buffer<float> buffer = buffer_of(dims, storage);
    const std::size_t count = static_cast<std::size_t>(buffer.number_of_elements());
    float* data = buffer.data();
    for (std::size_t e = 0; e < count; ++e) data[e] = perftune::input_value(seed, i, e, count);
    lowered.inputs[i].set(buffer);
  }
  std::vector<Halide::Buffer<>> outputs;
  for (OpId id : lowered.outputs) outputs.push_back(buffer_of(body.op(id).shape.dims, storage));
  Halide::Realization realization(outputs);
  const perftune::ParallelGuard guard{worker_threads, request.value("parallel_guard", perftune::ParallelGuard{}.max_attempts)};
  const bool guarded = guard.threads > 1 && guard.max_attempts > 0;
  // Read before the warm-up, which is the figure of a kernel slower than the timing budget.
  const double ratio_before_warm_up = guarded ? probe.ratio() : 0.0;
  const auto warm_up_start = Clock::now();
  try {
    pipeline.realize(realization, target);  // warm-up, and the values that are checked
  } catch (const Halide::Error& error) {
    return failure("runtime_error", error.what());
  }
  const double warm_up_seconds = seconds_since(warm_up_start);
  {
    std::ofstream out(request.at("outputs").get<std::string>(), std::ios::binary);
    for (const Halide::Buffer<>& b : outputs)
      out.write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.number_of_elements() * sizeof(float)));
    if (!out) return failure("runtime_error", "cannot write the outputs to " + request.at("outputs").get<std::string>());
  }

  const perftune::SampleTiming timing = perftune::SampleTiming::from_json(request.value("timing", json::object()));
  const auto time = [&](int attempt) {
    double warm_seconds = warm_up_seconds;
    if (attempt > 1) {  // warm again after the probe (and the figure of a kernel timed by its warm-up)
      const auto start = Clock::now();
      pipeline.realize(realization, target);
      warm_seconds = seconds_since(start);
    }
    return perftune::time_samples([&] { pipeline.realize(realization, target); }, warm_seconds, timing);
  };
  json reply = {{"status", "ok"}, {"compile_seconds", compiled.compile_seconds}};
  if (!guarded) {
    reply["repeats"] = time(1);
  } else {
    perftune::write_guarded(reply, perftune::guarded_samples(guard, [] { return probe.ratio(); }, time, perftune::ParallelGuard::pause,
                                                             std::optional<double>(ratio_before_warm_up)));
  }
  if (!compiled.schedule_hash.empty()) reply["schedule"] = compiled.schedule_hash;
  return reply;
}

// Pipelines compiled by a "keep" request, waiting for their "run".
std::map<std::int64_t, std::unique_ptr<Compiled>> kept;

json handle(const json& request) {
  if (request.contains("run")) {
    const std::int64_t id = request.at("run");
    const auto it = kept.find(id);
    if (it == kept.end()) return failure("runtime_error", "no pipeline kept as " + std::to_string(id));
    const std::unique_ptr<Compiled> compiled = std::move(it->second);
    kept.erase(it);
    return run(*compiled, request);
  }
  auto compiled = compile(request);
  if (json* reply = std::get_if<json>(&compiled)) return *reply;
  std::unique_ptr<Compiled>& pipeline = std::get<std::unique_ptr<Compiled>>(compiled);
  if (request.contains("keep")) {
    const double seconds = pipeline->compile_seconds;
    kept[request.at("keep").get<std::int64_t>()] = std::move(pipeline);
    return {{"status", "ok"}, {"compile_seconds", seconds}};
  }
  return run(*pipeline, request);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2 && argc != 3) {
    std::fprintf(stderr, "usage: %s THREADS [MEMORY_LIMIT_BYTES]\n", argv[0]);
    return 2;
  }
  // Halide's thread pool reads HL_NUM_THREADS when it starts (the first parallel realize).
  setenv("HL_NUM_THREADS", argv[1], 1);
  worker_threads = std::atoi(argv[1]);
  // A kernel that needs more memory than the limit fails its allocation here (a runtime_error
  // for that config) instead of driving the machine into the kernel's OOM killer.
  if (argc == 3) {
    const rlim_t bytes = std::stoull(argv[2]);
    const rlimit limit{bytes, bytes};
    setrlimit(RLIMIT_AS, &limit);
  }
  perftune::reuse_freed_memory();
  std::string line;
  while (std::getline(std::cin, line)) {
    json reply;
    try {
      reply = handle(json::parse(line));
    } catch (const std::bad_alloc&) {
      reply = failure("runtime_error", "out of memory (the worker's limit is " + std::string(argc == 3 ? argv[2] : "none") + " bytes)");
    } catch (const std::exception& error) {
      reply = failure("invalid_config", std::string("bad request: ") + error.what());
    }
    perftune::release_freed_memory();
    std::cout << reply.dump() << "\n" << std::flush;
  }
  return 0;
}
