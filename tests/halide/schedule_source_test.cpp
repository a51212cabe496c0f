#include "hardware/halide/worker/schedule_source.h"

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include <catch2/catch.hpp>

#include "hardware/halide/halide_schedule.h"
#include "hardware/halide/worker/apply_schedule.h"
#include "hardware/halide/worker/lowering.h"
#include "ir/fusion.h"
#include "ir/program_json.h"
#include "ir/random.h"
#include "test_support.h"

namespace perftune {
namespace {

// The loop nest Halide lowers `pipeline` to, its generated names' counters blanked.
std::string loop_nest(halide::ScheduledPipeline scheduled, const halide::LoweredKernel& lowered, const std::string& tag) {
  std::vector<Halide::Argument> arguments(lowered.inputs.begin(), lowered.inputs.end());
  const std::string file = scratch_dir("schedule_source_" + tag) + "/kernel.stmt";
  scheduled.pipeline.compile_to_lowered_stmt(file, arguments, Halide::StmtOutputFormat::Text, Halide::get_host_target());
  std::ifstream in(file);
  std::stringstream text;
  text << in.rdbuf();
  // Halide's generated names carry process-wide counters: "op5$3", "t3027", the module "op6_30",
  // "constant_exterior__4".
  std::string out = std::regex_replace(text.str(), std::regex(R"(\$\d+)"), "");
  out = std::regex_replace(out, std::regex(R"(\bt\d+\b)"), "t");
  return std::regex_replace(out, std::regex(R"(_+\d+(?![0-9]))"), "");
}

// Every kernel of `program_file` under greedy fusion, with its heuristic and `samples` random configs.
void check_program(const std::string& program_file, int samples) {
  const Program program = load_program_file(source_path(program_file));
  const FusionPlan plan = partition(program, FusionConfig::greedy_elementwise(program));
  Rng rng(11);
  for (const FusedKernel& fused : plan.kernels) {
    const Kernel& kernel = fused.kernel;
    const SearchSpace space = halide_schedule_space(kernel);
    std::vector<Config> configs = {heuristic_config(space, kernel)};
    for (int i = 0; i < samples; ++i) configs.push_back(space.sample(rng));
    for (const Config& config : configs) {
      CAPTURE(kernel.name(), config.to_string());
      const HalideSchedule schedule = schedule_from_knobs(kernel.body(), named_knobs(space, config));
      halide::LoweredKernel first = halide::lower(kernel.body(), schedule.panels);
      halide::ScheduledPipeline scheduled;
      try {
        scheduled = halide::apply_schedule(first, kernel.body(), schedule);
      } catch (const Halide::CompileError&) {
        continue;  // a config Halide rejects has no loop nest to compare
      }
      // Read before compiling, as perftune_halide_aot reads it: lowering adds Funcs of its own.
      const std::vector<halide::ScheduleDirective> directives = halide::schedule_directives(scheduled.pipeline);
      std::string expected;
      try {
        expected = loop_nest(scheduled, first, "a");
      } catch (const Halide::CompileError&) {
        continue;
      }
      const std::string source = halide::schedule_source(directives, "kernel");
      CHECK_THAT(source, Catch::StartsWith("inline void apply_schedule_kernel(::Halide::Pipeline pipeline, ::Halide::Target target) {"));
      // The same directives on a fresh lowering give the same loop nest.
      halide::LoweredKernel second = halide::lower(kernel.body(), schedule.panels);
      const halide::ScheduledPipeline algorithm = halide::schedule_algorithm(second, kernel.body(), schedule);
      halide::apply_directives(directives, algorithm.pipeline);
      const std::string replayed = loop_nest(algorithm, second, "b");
      if (replayed != expected) {  // both kept for a diff
        std::ofstream(scratch_dir("schedule_source_mismatch") + "/expected.stmt") << expected;
        std::ofstream(std::string(PERFTUNE_BINARY_DIR) + "/test_scratch/schedule_source_mismatch/replayed.stmt") << replayed;
        std::ofstream(std::string(PERFTUNE_BINARY_DIR) + "/test_scratch/schedule_source_mismatch/source.h") << source;
      }
      CHECK(replayed == expected);
    }
  }
}

TEST_CASE("a schedule read back and replayed on a fresh lowering gives the same loop nest") {
  check_program("tests/fixtures/networks/dense_stack.json", 3);
  check_program("configs/programs/conv3x3_layer.json", 3);
}

}  // namespace
}  // namespace perftune
