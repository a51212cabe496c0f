#include "export/network_export.h"

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <catch2/catch.hpp>

#include "autotuner/network/network_tasks.h"
#include "autotuner/network_fake_backend.h"
#include "export/halide_export.h"
#include "hardware/process/subprocess.h"
#include "hardware/reference/reference_interpreter.h"
#include "ir/file_io.h"
#include "ir/input_error.h"
#include "ir/random.h"
#include "test_support.h"

namespace perftune {
namespace {

SubprocessResult run_or_fail(const std::vector<std::string>& argv) {
  const SubprocessResult result = run_subprocess(argv, "", 600);
  INFO(argv.front() << ": " << result.describe() << "\n" << result.err << result.out);
  REQUIRE(result.ok());
  return result;
}

void write_floats(const std::string& path, const std::vector<float>& values) {
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(values.data()), static_cast<std::streamsize>(values.size() * sizeof(float)));
}

std::vector<float> read_floats(const std::string& path) {
  const std::string bytes = read_file(path);
  std::vector<float> values(bytes.size() / sizeof(float));
  std::memcpy(values.data(), bytes.data(), values.size() * sizeof(float));
  return values;
}

// Exports `network` (tuned for `measurements` on the fake), builds its example with CMake, runs it
// on random inputs and checks every output against the reference interpreter; returns the folder
// and what the example printed.
std::pair<std::string, std::string> export_build_and_check(const std::string& network, std::size_t measurements, const std::string& tag,
                                                           const NetworkExportOptions& options = {}) {
  const std::string run = scratch_dir(tag + "_run"), out = scratch_dir(tag + "_out");
  testing::NetworkFakeBackend fake;
  testing::tune_on(testing::dense_stack_campaign(measurements, run, "gradient", network), fake);
  const auto tuning = export_network(run, out, options);
  CHECK(tuning["complete"] == true);
  CHECK(tuning["untuned"].empty());
  CHECK(tuning["estimated_latency_seconds"].is_number());
  for (const char* file : {"HalideRuntime.h", "tuning.json", "example/CMakeLists.txt", "example/main.cpp"})
    CHECK(std::filesystem::exists(std::filesystem::path(out) / file));
  run_or_fail({"cmake", "-S", out + "/example", "-B", out + "/example_build"});
  run_or_fail({"cmake", "--build", out + "/example_build"});

  const Program program = load_network(source_path(network));
  const std::vector<OpId> inputs = library_inputs(program);
  std::vector<std::vector<float>> values;
  Rng rng(7);
  std::filesystem::create_directories(out + "/in");
  std::filesystem::create_directories(out + "/got");
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    std::vector<float> v(static_cast<std::size_t>(program.op(inputs[i]).shape.element_count()));
    for (float& x : v) x = static_cast<float>(uniform_unit(rng) - 0.5);
    write_floats(out + "/in/input_" + std::to_string(i) + ".bin", v);
    values.push_back(std::move(v));
  }
  const SubprocessResult example = run_or_fail({out + "/example_build/example", out + "/in", out + "/got", "3"});
  const std::string printed = example.out + example.err;
  const auto expected = interpret(program, values);  // the program's weights are inputs, in parameter order
  const std::vector<OpId> outputs = library_outputs(program);
  for (std::size_t o = 0; o < outputs.size(); ++o) {
    CAPTURE(o);
    const std::vector<float> got = read_floats(out + "/got/output_" + std::to_string(o) + ".bin");
    const std::vector<float>& want = expected[outputs[o]];
    REQUIRE(got.size() == want.size());
    double scale = 0, error = 0;
    for (std::size_t i = 0; i < want.size(); ++i) {
      scale = std::max(scale, static_cast<double>(std::abs(want[i])));
      error = std::max(error, static_cast<double>(std::abs(got[i] - want[i])));
    }
    CHECK(error <= 1e-3 * std::max(scale, 1e-6));
  }
  return {out, printed};
}

TEST_CASE("an exported network builds with CMake, runs, matches the reference interpreter and refuses wrong shapes") {
  const std::string out = export_build_and_check(testing::kDenseStack, 8, "network_export").first;
  const auto tuning = nlohmann::json::parse(read_file(out + "/tuning.json"));
  REQUIRE(tuning["kernels"].size() == 2);
  CHECK(tuning["kernels"][0]["instances"].size() == 3);
  CHECK(tuning["kernels"][0]["schedule"] == "tuned");
  CHECK(tuning["kernels"][0]["device"] == "fake:network");
  const std::string schedule = read_file(out + "/dense_stack.schedule.h");
  CHECK_THAT(schedule, Catch::Contains("inline void apply_schedule_dense_stack_k0(::Halide::Pipeline pipeline, ::Halide::Target target)"));
  CHECK_THAT(schedule, Catch::Contains("apply_schedule_dense_stack_k1") && Catch::Contains(".split(") && !Catch::Contains("not written"));

  // The entry point with a wrong shape: an error code and a message, no crash.
  {
    std::ofstream bad(out + "/bad.cpp");
    bad << "#include <cstdio>\n#include <vector>\n#include \"dense_stack.h\"\n"
           "int main() {\n  std::vector<float> data(4096);\n  halide_dimension_t dims[2] = {halide_dimension_t(0, 15, 1), halide_dimension_t(0, 8, 15)};\n"
           "  halide_buffer_t b = halide_buffer_t();\n  b.host = reinterpret_cast<uint8_t *>(data.data());\n"
           "  b.type = halide_type_t(halide_type_float, 32);\n  b.dimensions = 2;\n  b.dim = dims;\n  std::vector<halide_buffer_t> args(dense_stack_INPUTS + dense_stack_OUTPUTS, b);\n"
           "  const int code = dense_stack(&args[0], &args[1], &args[2], &args[3], &args[4], &args[5], &args[6], &args[7], &args[8], &args[9]);\n"
           "  std::printf(\"%d %s\\n\", code, dense_stack_last_error());\n  return 0;\n}\n";
  }
  run_or_fail({"c++", "-std=c++17", "-I" + out, out + "/bad.cpp", out + "/dense_stack.a", "-lpthread", "-ldl", "-o", out + "/bad"});
  const SubprocessResult bad = run_subprocess({out + "/bad"}, "", 60);
  REQUIRE(bad.ok());
  CHECK_THAT(bad.out, Catch::StartsWith("-1 input x [8, 16]: dimension 0 (innermost first) has extent 15, 16 expected"));
}

TEST_CASE("a network with two outputs and a value two kernels read exports and matches the reference") {
  export_build_and_check("tests/fixtures/networks/shared_value.json", 6, "network_export_shared");
}

TEST_CASE("an export with --profile prints Halide's report of every kernel when its example exits") {
  NetworkExportOptions options;
  options.profile = true;
  const auto [out, printed] = export_build_and_check(testing::kDenseStack, 8, "network_export_profile", options);
  CHECK(nlohmann::json::parse(read_file(out + "/tuning.json"))["profile"] == true);
  CHECK_THAT(printed, Catch::Contains("dense_stack_k0\n") && Catch::Contains("dense_stack_k1\n") && Catch::Contains("time/run"));
}

TEST_CASE("a run that measured only some kernels exports the rest with their heuristic and says which") {
  const std::string run = scratch_dir("network_export_partial_run"), out = scratch_dir("network_export_partial_out");
  testing::NetworkFakeBackend fake;
  testing::tune_on(testing::dense_stack_campaign(1, run), fake);
  const auto tuning = export_network(run, out);
  REQUIRE(tuning["untuned"].size() == 1);
  CHECK(tuning["kernels"][1]["schedule"] == "heuristic (untuned)");
  CHECK(tuning["estimated_latency_seconds"].is_null());
  CHECK(std::filesystem::exists(std::filesystem::path(out) / "dense_stack.a"));
  CHECK_THROWS_AS(export_network(out, scratch_dir("network_export_nothing")), InputError);
}

}  // namespace
}  // namespace perftune
