// Each failure mode of a generated kernel comes back as its status while the batch goes on;
// fused and unfused executions agree with the reference; the compile cache is reused.
#include "hardware/cpu_backend.h"

#include <algorithm>
#include <filesystem>

#include "hardware/cpu_codegen.h"
#include "hardware/cpu_tile_space.h"
#include "hardware/fusion_space.h"
#include "hardware_test_support.h"
#include "ir/fusion.h"

namespace perftune {
namespace {

const char* kMatmul = R"({"name": "mm", "ops": [
  {"name": "a", "opcode": "parameter", "shape": [8, 16], "parameter_number": 0},
  {"name": "b", "opcode": "parameter", "shape": [16, 8], "parameter_number": 1},
  {"name": "y", "opcode": "dot", "operands": ["a", "b"], "shape": [8, 8], "dot": {"lhs_contracting": [1], "rhs_contracting": [0]}}]})";

// Softmax over rows of a matmul, plus a residual: reductions, broadcasts, elementwise chains.
const char* kAttentionRow = R"({"name": "attn", "ops": [
  {"name": "q", "opcode": "parameter", "shape": [6, 8], "parameter_number": 0},
  {"name": "k", "opcode": "parameter", "shape": [6, 8], "parameter_number": 1},
  {"name": "s", "opcode": "dot", "operands": ["q", "k"], "shape": [6, 6], "dot": {"lhs_contracting": [1], "rhs_contracting": [1]}},
  {"name": "m", "opcode": "reduce", "operands": ["s"], "shape": [6], "dimensions": [1], "called": ["max_body"]},
  {"name": "mb", "opcode": "broadcast", "operands": ["m"], "shape": [6, 6], "dimensions": [0]},
  {"name": "c", "opcode": "subtract", "operands": ["s", "mb"], "shape": [6, 6]},
  {"name": "e", "opcode": "exponential", "operands": ["c"], "shape": [6, 6]},
  {"name": "z", "opcode": "reduce", "operands": ["e"], "shape": [6], "dimensions": [1]},
  {"name": "zb", "opcode": "broadcast", "operands": ["z"], "shape": [6, 6], "dimensions": [0]},
  {"name": "p", "opcode": "divide", "operands": ["e", "zb"], "shape": [6, 6]},
  {"name": "o", "opcode": "dot", "operands": ["p", "k"], "shape": [6, 8], "dot": {"lhs_contracting": [1], "rhs_contracting": [0]}},
  {"name": "y", "opcode": "add", "operands": ["o", "q"], "shape": [6, 8]}], "computations": [{"name": "max_body", "root": "m", "ops": [{"name": "a", "opcode": "parameter", "shape": [], "parameter_number": 0}, {"name": "b", "opcode": "parameter", "shape": [], "parameter_number": 1}, {"name": "m", "opcode": "maximum", "operands": ["a", "b"], "shape": []}]}]})";

TEST_CASE("each failure mode comes back as its status while the batch goes on", "[hardware][cpu]") {
  CpuBackendOptions options = fast_cpu_options();
  options.run_timeout_seconds = 1.5;
  // The generated source names its config in the first line, so the hook can pick one per config.
  options.transform_source = [](std::string source) {
    const auto replace = [&](const std::string& from, const std::string& to) {
      const auto at = source.find(from);
      REQUIRE(at != std::string::npos);
      source.replace(at, from.size(), to);
    };
    if (source.find("config [1,8,16]") != std::string::npos) replace("typedef long int64_t;", "typedef long int64_t;\nthis is not C++;");
    if (source.find("config [2,8,16]") != std::string::npos) replace("  group_0(b);", "  __builtin_trap();");
    if (source.find("config [4,8,16]") != std::string::npos) replace("  group_0(b);", "  for (;;) asm volatile(\"\");");
    if (source.find("config [8,8,16]") != std::string::npos) replace("  group_0(b);", "  group_0(b);\n  b[2][5] += 1000.0f;");
    return source;
  };
  CpuBackend backend(options);
  const Kernel kernel("mm", program_from_text(kMatmul));
  const SearchSpace space = cpu_tile_space(kernel);
  const std::vector<Config> configs = {{{1, 8, 16}}, {{2, 8, 16}}, {{4, 8, 16}}, {{8, 8, 16}}, {{8, 4, 4}}, {{3, 8, 16}}};
  const auto results = backend.measure(kernel, space, configs);
  REQUIRE(results.size() == configs.size());
  const std::vector<MeasureStatus> expected = {MeasureStatus::kCompileError, MeasureStatus::kRuntimeError, MeasureStatus::kTimeout,
                                               MeasureStatus::kWrongResult, MeasureStatus::kOk, MeasureStatus::kInvalidConfig};
  for (std::size_t i = 0; i < configs.size(); ++i) {
    CAPTURE(configs[i].to_string(), results[i].message);
    CHECK(status_name(results[i].status) == status_name(expected[i]));
    CHECK((results[i].ok() ? results[i].seconds > 0 : !results[i].message.empty()));
  }
  CHECK(results[0].message.find("not C++") != std::string::npos);  // the compiler's own words
  CHECK(results[1].message.find("signal") != std::string::npos);
  CHECK(results[3].message.find("element 5") != std::string::npos);
  CHECK(results[2].cost_seconds >= 1.5);  // a hang is charged its timeout
}

TEST_CASE("fused and unfused executions of a program agree with the reference", "[hardware][cpu][fusion]") {
  const Program program = program_from_text(kAttentionRow);
  const Kernel whole("attn", program);
  const SearchSpace space = fusion_space(program);
  std::vector<Config> configs = {fusion_space_config(program, space, FusionConfig::none(program)),
                                 fusion_space_config(program, space, FusionConfig::greedy_elementwise(program))};
  Rng rng(7);
  for (int i = 0; i < 4; ++i) configs.push_back(space.sample(rng));
  const auto results = shared_cpu_backend().measure(whole, space, configs);
  for (std::size_t i = 0; i < configs.size(); ++i) {
    CAPTURE(i, configs[i].to_string(), results[i].message);
    CHECK(results[i].status == MeasureStatus::kOk);
  }
  // Fusion really removes intermediate buffers: unfused writes every op, greedy fewer.
  const auto unfused = generate_cpu_kernel(whole, space, configs[0]);
  const auto greedy = generate_cpu_kernel(whole, space, configs[1]);
  CHECK(unfused.buffers.ops.size() == program.size());
  CHECK(greedy.buffers.ops.size() < unfused.buffers.ops.size());
}

TEST_CASE("fusion space keeps only partitions the CPU can run", "[hardware][fusion]") {
  const Program program = program_from_text(kAttentionRow);
  const SearchSpace space = fusion_space(program);
  Rng rng(3);
  for (int i = 0; i < 50; ++i) {
    const Config config = space.sample(rng);
    const FusionConfig fusion = fusion_config_of(program, space, config);
    CAPTURE(config.to_string());
    CHECK(is_legal(program, fusion));
    const FusionPlan plan = partition(program, fusion);
    for (const FusedKernel& k : plan.kernels) {
      const auto reductions = std::count_if(k.members.begin(), k.members.end(), [&](OpId id) {
        const std::string& opcode = program.op(id).opcode;
        return opcode == "dot" || opcode == "reduce";
      });
      CHECK(reductions <= 1);
    }
  }
  // dot -> reduce (max) can never fuse, so it gets no knob.
  const auto names = space.knob_names();
  const std::size_t dot_to_max = 2;  // edges: q->s, k->s, s->m, ...
  REQUIRE(program.op(program.edges()[dot_to_max].consumer).name == "m");
  CHECK(std::find(names.begin(), names.end(), fuse_knob(dot_to_max)) == names.end());
}

TEST_CASE("compiled kernels are cached on disk by source, compiler and flags", "[hardware][cpu]") {
  CpuBackendOptions options = fast_cpu_options();
  options.cache_dir = scratch_dir("cpu_cache_reuse");
  const Kernel kernel("mm", program_from_text(kMatmul));
  const SearchSpace space = cpu_tile_space(kernel);
  const std::vector<Config> configs = {{{8, 8, 16}}, {{8, 8, 16}}};
  CpuBackend first(options);
  const auto a = first.measure(kernel, space, configs);
  CHECK(first.compiles() == 1);  // a batch compiles a repeated config once
  CHECK(a[0].cost_seconds > a[1].cost_seconds);  // ... and charges the compile to it once
  CpuBackend second(options);
  const auto b = second.measure(kernel, space, std::vector<Config>{configs[0]});
  CHECK(second.compiles() == 0);
  CHECK(second.cache_hits() == 1);
  CHECK(b[0].ok());
  CHECK(second.fingerprint().rfind("cpu:", 0) == 0);
}

TEST_CASE("a cached kernel whose file no longer matches its stored hash is rebuilt, not trusted by name", "[hardware][cpu]") {
  CpuBackendOptions options = fast_cpu_options();
  options.cache_dir = scratch_dir("cpu_cache_tampered");
  const Kernel kernel("mm", program_from_text(kMatmul));
  const SearchSpace space = cpu_tile_space(kernel);
  const std::vector<Config> config = {{{8, 8, 16}}};
  CpuBackend(options).measure(kernel, space, config);
  std::string library;
  for (const auto& entry : std::filesystem::directory_iterator(options.cache_dir))
    if (entry.path().extension() == ".so") library = entry.path().string();
  REQUIRE(!library.empty());
  std::filesystem::resize_file(library, std::filesystem::file_size(library) / 2);  // a torn or replaced .so
  CpuBackend second(options);
  const auto result = second.measure(kernel, space, config);
  CHECK(second.cache_hits() == 0);
  CHECK(second.compiles() == 1);
  CAPTURE(result[0].message);
  CHECK(result[0].ok());
}

}  // namespace
}  // namespace perftune
