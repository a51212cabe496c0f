#include "export/network_export.h"

#include <filesystem>
#include <map>
#include <optional>

#include "autotuner/network/network_tasks.h"
#include "autotuner/summary_fields.h"
#include "export/halide_export.h"
#include "hardware/halide/halide_schedule.h"
#include "hardware/reference/reference_interpreter.h"
#include "ir/file_io.h"
#include "ir/input_error.h"
#include "ir/json_view.h"
#include "ir/record_log.h"

namespace perftune {

namespace {

struct Chosen {
  Config config;
  std::optional<double> seconds;  // measured; none: the heuristic, untuned
};

// The fastest ok record of each kernel key on `device`, as a config of its task's space.
std::vector<Chosen> choose_configs(const NetworkPartition& network, const std::vector<Record>& records, const std::string& device) {
  std::vector<Chosen> chosen;
  std::map<std::string, std::size_t> task_of_key;
  for (std::size_t i = 0; i < network.tasks.size(); ++i) {
    task_of_key[network.tasks[i].kernel.key()] = i;
    chosen.push_back({network.tasks[i].heuristic, std::nullopt});
  }
  for (const Record& record : records) {
    const auto it = task_of_key.find(record.kernel_key);
    if (it == task_of_key.end() || record.device != device || !record.result.ok()) continue;
    const NetworkTask& task = network.tasks[it->second];
    const auto config = in_space_order(record, task.space->knob_names());
    if (!config || !task.space->contains(*config)) continue;
    Chosen& best = chosen[it->second];
    if (!best.seconds || record.result.seconds < *best.seconds) best = {*config, record.result.seconds};
  }
  return chosen;
}

// The program ops an instance's kernel writes, in computed_outputs() order (the order of its
// function's output arguments), found by name (a kernel's ops keep their program names).
std::vector<OpId> written_ops(const Program& program, const FusedKernel& fused) {
  std::vector<OpId> written;
  for (OpId id : computed_outputs(fused.kernel.body())) {
    const auto op = program.find(fused.kernel.body().op(id).name);
    if (!op) throw std::runtime_error("kernel " + fused.kernel.name() + " writes " + fused.kernel.body().op(id).name + ", which the network does not name");
    written.push_back(*op);
  }
  for (OpId needed : fused.outputs)
    if (std::find(written.begin(), written.end(), needed) == written.end())
      throw std::runtime_error("kernel " + fused.kernel.name() + " computes " + program.op(needed).name +
                               " for another kernel but also uses it itself, so it does not write it out; this network cannot be exported yet");
  return written;
}

std::vector<std::vector<std::int64_t>> argument_shapes(const Program& body) {
  std::vector<std::vector<std::int64_t>> shapes;
  for (OpId id : ordered_parameters(body)) shapes.push_back(body.op(id).shape.dims);
  for (OpId id : computed_outputs(body)) shapes.push_back(body.op(id).shape.dims);
  return shapes;
}

std::string example_cmake(const std::string& name) {
  return "# Builds the example that links " + name + ".a (perftune export).\n"
         "#   cmake -S . -B build && cmake --build build && build/example INPUT_DIR OUTPUT_DIR\n"
         "cmake_minimum_required(VERSION 3.16)\nproject(" + name + "_example CXX)\nset(CMAKE_CXX_STANDARD 17)\n"
         "find_package(Threads REQUIRED)\nadd_executable(example main.cpp)\n"
         "target_include_directories(example PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/..)\n"
         "target_link_libraries(example PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/../" + name + ".a Threads::Threads ${CMAKE_DL_LIBS})\n";
}

std::string example_main(const std::string& name, std::size_t arguments) {
  std::string call;
  for (std::size_t i = 0; i < arguments; ++i) call += (i ? ", " : "") + std::string("&buffers[") + std::to_string(i) + "]";
  return "// Runs " + name + " on the inputs in INPUT_DIR, writes its outputs to OUTPUT_DIR, then times it.\n"
         "//   example INPUT_DIR OUTPUT_DIR [RUNS]\n"
         "// INPUT_DIR/input_K.bin: input K (" + name + ".h) as raw f32, row-major; OUTPUT_DIR/output_K.bin likewise.\n"
         "#include <algorithm>\n#include <chrono>\n#include <cstdio>\n#include <cstdlib>\n#include <fstream>\n#include <string>\n#include <vector>\n\n"
         "#include \"" + name + ".h\"\n\n"
         "int main(int argc, char **argv) {\n"
         "  if (argc < 3) {\n    std::fprintf(stderr, \"usage: %s INPUT_DIR OUTPUT_DIR [RUNS]\\n\", argv[0]);\n    return 2;\n  }\n"
         "  const int runs = argc > 3 ? std::atoi(argv[3]) : 20;\n"
         "  const int count = " + name + "_INPUTS + " + name + "_OUTPUTS;\n"
         "  std::vector<std::vector<float>> data(count);\n  std::vector<std::vector<halide_dimension_t>> dims(count);\n"
         "  std::vector<halide_buffer_t> buffers(count);\n"
         "  for (int i = 0; i < count; ++i) {\n    const int rank = " + name + "_argument_ranks[i];\n    std::size_t elements = 1;\n"
         "    for (int d = 0; d < rank; ++d) elements *= static_cast<std::size_t>(" + name + "_argument_shapes[i][d]);\n"
         "    data[i].resize(elements);\n    int stride = 1;\n"
         "    for (int d = rank; d-- > 0;) {  // Halide's order: innermost first\n"
         "      const int extent = static_cast<int>(" + name + "_argument_shapes[i][d]);\n"
         "      dims[i].push_back(halide_dimension_t(0, extent, stride));\n      stride *= extent;\n    }\n"
         "    buffers[i] = halide_buffer_t();\n    buffers[i].host = reinterpret_cast<uint8_t *>(data[i].data());\n"
         "    buffers[i].type = halide_type_t(halide_type_float, 32);\n    buffers[i].dimensions = rank;\n"
         "    buffers[i].dim = rank ? dims[i].data() : nullptr;\n"
         "    if (i < " + name + "_INPUTS) {\n      const std::string path = std::string(argv[1]) + \"/input_\" + std::to_string(i) + \".bin\";\n"
         "      std::ifstream in(path, std::ios::binary);\n"
         "      if (!in.read(reinterpret_cast<char *>(data[i].data()), static_cast<std::streamsize>(elements * sizeof(float)))) {\n"
         "        std::fprintf(stderr, \"%s: %zu f32 values expected (input %s)\\n\", path.c_str(), elements, " + name + "_argument_names[i]);\n"
         "        return 1;\n      }\n    }\n  }\n"
         "  if (" + name + "(" + call + ") != 0) {\n    std::fprintf(stderr, \"" + name + ": %s\\n\", " + name + "_last_error());\n    return 1;\n  }\n"
         "  for (int i = " + name + "_INPUTS; i < count; ++i) {\n"
         "    const std::string path = std::string(argv[2]) + \"/output_\" + std::to_string(i - " + name + "_INPUTS) + \".bin\";\n"
         "    std::ofstream out(path, std::ios::binary);\n"
         "    out.write(reinterpret_cast<const char *>(data[i].data()), static_cast<std::streamsize>(data[i].size() * sizeof(float)));\n"
         "    if (!out) {\n      std::fprintf(stderr, \"cannot write %s\\n\", path.c_str());\n      return 1;\n    }\n  }\n"
         "  std::vector<double> ms;\n  for (int r = 0; r < runs; ++r) {\n    const auto start = std::chrono::steady_clock::now();\n"
         "    " + name + "(" + call + ");\n"
         "    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());\n  }\n"
         "  if (!ms.empty()) {\n    std::sort(ms.begin(), ms.end());\n"
         "    std::printf(\"" + name + ": median %.3f ms over %d runs (min %.3f, max %.3f)\\n\", ms[ms.size() / 2], runs, ms.front(), ms.back());\n  }\n"
         "  return 0;\n}\n";
}

}  // namespace

nlohmann::ordered_json export_network(const std::string& run_dir, const std::string& output, const NetworkExportOptions& options) {
  const std::optional<double>& at_seconds = options.at_seconds;
  const std::string summary_path = (std::filesystem::path(run_dir) / "network.json").string();
  if (!path_exists(summary_path))
    throw InputError(run_dir, "network.json", "a folder that `perftune tune NETWORK` wrote; it has no network.json");
  const nlohmann::json summary = parse_json_file(summary_path);
  const JsonView view(summary, summary_path);
  const std::string source = view.at("source").as_string();
  const std::string device = view.at("device").as_string();
  const bool complete = view.has("stop_reason") && view.at("stop_reason").as_string() != "running";
  NetworkPartition network = partition_network(load_network(source), source);

  const std::string records_path = (std::filesystem::path(run_dir) / "records.jsonl").string();
  std::vector<Record> records = path_exists(records_path) ? RecordLog::load(records_path).records : std::vector<Record>{};
  if (at_seconds) {
    // The log is in measurement order: keep the measurements of the rounds done by then.
    std::size_t kept = 0;
    for (const JsonView& round : view.at("rounds").elements())
      if (round.at("tuning_seconds").as_number() <= *at_seconds) kept = static_cast<std::size_t>(round.at("measurements").as_count());
    records.resize(std::min(records.size(), kept));
  }
  const std::vector<Chosen> chosen = choose_configs(network, records, device);

  NetworkLibrary library;
  library.name = c_identifier(options.name.empty() ? network.program.name() : options.name);
  library.program = &network.program;
  library.profile = options.profile;
  // One function per task; an instance whose arguments' order differs from its task's gets its own.
  std::vector<std::size_t> function_of_task(network.tasks.size(), SIZE_MAX);
  std::vector<std::vector<std::string>> instances_of_function;
  auto add_function = [&](std::size_t task, const Kernel& kernel) {
    const NetworkTask& t = network.tasks[task];
    library.kernels.push_back({library.name + "_k" + std::to_string(library.kernels.size()), kernel.body(),
                               named_knobs(*t.space, chosen[task].config), named_knobs(*t.space, t.heuristic)});
    instances_of_function.emplace_back();
    return library.kernels.size() - 1;
  };
  std::vector<std::size_t> task_of_function;
  for (std::size_t k = 0; k < network.plan.kernels.size(); ++k) {
    const FusedKernel& fused = network.plan.kernels[k];
    const std::size_t task = network.task_of_kernel[k];
    std::size_t function = function_of_task[task];
    if (function == SIZE_MAX) {
      function = function_of_task[task] = add_function(task, network.tasks[task].kernel);
      task_of_function.push_back(task);
    }
    if (argument_shapes(library.kernels[function].body) != argument_shapes(fused.kernel.body())) {
      function = add_function(task, fused.kernel);
      task_of_function.push_back(task);
    }
    instances_of_function[function].push_back(fused.kernel.name());
    library.calls.push_back({function, fused.inputs, written_ops(network.program, fused)});
  }
  const std::map<std::string, std::string> fell_back = write_network_library(library, output);

  nlohmann::ordered_json kernels = nlohmann::ordered_json::array();
  nlohmann::ordered_json untuned = nlohmann::ordered_json::array();
  double latency = 0.0;
  bool latency_known = true;  // every kernel's chosen schedule was measured
  for (std::size_t f = 0; f < library.kernels.size(); ++f) {
    const std::size_t task = task_of_function[f];
    const NetworkTask& t = network.tasks[task];
    const bool heuristic = fell_back.count(library.kernels[f].function) > 0;
    const auto& seconds = chosen[task].seconds;
    if (!seconds) untuned.push_back(t.kernel.name());
    if (seconds && !heuristic) latency += *seconds * static_cast<double>(instances_of_function[f].size());
    else latency_known = false;
    kernels.push_back({{"function", library.kernels[f].function},
                       {"kernel", t.kernel.name()},
                       {"key", t.kernel.key()},
                       {"instances", instances_of_function[f]},
                       {"config", t.space->to_json(heuristic ? t.heuristic : chosen[task].config)},
                       {"schedule", heuristic ? "heuristic (the recorded one failed to compile)" : seconds ? "tuned" : "heuristic (untuned)"},
                       {"measured_seconds", optional_number(heuristic ? std::nullopt : seconds)},
                       {"device", device}});
  }
  nlohmann::ordered_json fell = nlohmann::ordered_json::object();
  for (const auto& [function, error] : fell_back) fell[function] = error;
  nlohmann::ordered_json tuning;
  tuning["network"] = network.program.name();
  tuning["source"] = source;
  tuning["device"] = device;
  tuning["run"] = std::filesystem::absolute(run_dir).string();
  tuning["complete"] = complete;
  tuning["at_seconds"] = optional_number(at_seconds);
  tuning["measurements_used"] = records.size();
  tuning["profile"] = options.profile;
  tuning["library"] = (std::filesystem::absolute(output) / (library.name + ".a")).string();
  tuning["entry_point"] = library.name;
  tuning["estimated_latency_seconds"] = optional_number(latency_known ? std::optional<double>(latency) : std::nullopt);
  tuning["untuned"] = std::move(untuned);
  tuning["fell_back"] = std::move(fell);
  tuning["kernels"] = std::move(kernels);
  write_file_atomically((std::filesystem::path(output) / "tuning.json").string(), tuning.dump(1) + "\n");

  const std::filesystem::path example = std::filesystem::path(output) / "example";
  std::filesystem::create_directories(example);
  write_file_atomically((example / "CMakeLists.txt").string(), example_cmake(library.name));
  write_file_atomically((example / "main.cpp").string(),
                        example_main(library.name, library_inputs(network.program).size() + library_outputs(network.program).size()));
  return tuning;
}

}  // namespace perftune
