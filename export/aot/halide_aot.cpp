// perftune_halide_aot: compiles kernels ahead of time for this CPU, the Halide side of
// `perftune export` (export/halide_export.h). Like the runner, it is a child process, so the
// tuner itself never links Halide.
//
//   perftune_halide_aot PLAN.json OUTPUT_DIR
//
// PLAN.json: {"kernels": [{"function": NAME, "program": {...perftune program...},
//                          "schedule": {"tile.out.0": 64, ...}}, ...], "profile": false}
// For each kernel: the program lowered (hardware/halide/worker/lowering.h), the schedule applied
// (hardware/halide/worker/apply_schedule.h), and OUTPUT_DIR/NAME.o and NAME.h written (a C function
// `int NAME(halide_buffer_t *input..., halide_buffer_t *output...)`, compiled without the Halide
// runtime) and NAME.schedule.txt (apply_schedule_NAME, hardware/halide/worker/schedule_source.h); then
// OUTPUT_DIR/halide_runtime.o, the one runtime they share. A kernel whose schedule
// Halide rejects is compiled under its "fallback" schedule when the plan gives one. Prints
// {"fell_back": [{"function": NAME, "error": "..."}]} and exits 0, or exits 1 with one line on
// stderr naming the kernel and what Halide said.
#include <Halide.h>

#include <fstream>
#include <iostream>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "hardware/halide/halide_schedule.h"
#include "hardware/halide/worker/apply_schedule.h"
#include "hardware/halide/worker/lowering.h"
#include "hardware/halide/worker/schedule_source.h"
#include "ir/json_view.h"
#include "ir/program_json.h"

namespace {

void compile_kernel(const nlohmann::json& kernel, const nlohmann::json& schedule_knobs, const std::string& dir, const Halide::Target& target) {
  const std::string function = kernel.at("function").get<std::string>();
  const perftune::Program body = perftune::program_from_json(perftune::JsonView(kernel.at("program"), "plan", "$.program"));
  std::map<std::string, std::int64_t> knobs;
  for (const auto& [name, value] : schedule_knobs.items()) knobs[name] = value.get<std::int64_t>();
  const perftune::HalideSchedule schedule = perftune::schedule_from_knobs(body, knobs);
  perftune::halide::LoweredKernel lowered = perftune::halide::lower(body, schedule.panels);
  perftune::halide::ScheduledPipeline scheduled = perftune::halide::apply_schedule(lowered, body, schedule);
  // The schedule as Halide C++ (hardware/halide/worker/schedule_source.h), read before compiling: lowering adds
  // Funcs of its own.
  std::string source;
  try {
    source = perftune::halide::schedule_source(perftune::halide::schedule_directives(scheduled.pipeline), function);
  } catch (const std::exception& error) {
    source = "// apply_schedule_" + function + ": not written (" + error.what() + ")\n";
  }
  std::vector<Halide::Argument> arguments;
  for (const Halide::ImageParam& input : lowered.inputs) arguments.push_back(input);
  scheduled.pipeline.compile_to({{Halide::OutputFileType::object, dir + "/" + function + ".o"},
                                 {Halide::OutputFileType::c_header, dir + "/" + function + ".h"}},
                                arguments, function, target);
  std::ofstream(dir + "/" + function + ".schedule.txt") << source;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: perftune_halide_aot PLAN.json OUTPUT_DIR\n";
    return 2;
  }
  const std::string dir = argv[2];
  std::string function = "(plan)";
  try {
    std::ifstream in(argv[1]);
    const nlohmann::json plan = nlohmann::json::parse(in);
    Halide::Target host = Halide::get_host_target();
    if (plan.value("profile", false)) host = host.with_feature(Halide::Target::Profile);  // Halide's profiler, reporting at exit
    const Halide::Target kernels = host.with_feature(Halide::Target::NoRuntime);
    nlohmann::json fell_back = nlohmann::json::array();
    for (const nlohmann::json& kernel : plan.at("kernels")) {
      function = kernel.at("function").get<std::string>();
      try {
        compile_kernel(kernel, kernel.at("schedule"), dir, kernels);
      } catch (const std::exception& error) {
        // JIT and AOT compile alike, but a recorded config may come from another build: the
        // kernel's fallback (its heuristic) then stands in, and the reply says so.
        if (!kernel.contains("fallback")) throw;
        compile_kernel(kernel, kernel.at("fallback"), dir, kernels);
        fell_back.push_back({{"function", function}, {"error", error.what()}});
      }
    }
    std::cout << nlohmann::json{{"fell_back", fell_back}}.dump() << "\n";
    function = "(runtime)";
    Halide::compile_standalone_runtime(dir + "/halide_runtime.o", host);
  } catch (const std::exception& error) {
    std::string message = error.what();
    for (char& c : message)
      if (c == '\n') c = ' ';
    std::cerr << function << ": " << message << "\n";
    return 1;
  }
  return 0;
}
