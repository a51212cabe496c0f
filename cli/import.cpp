// perftune import MODEL.onnx [--output PROGRAM.json] [--input NAME=DIMS ...] [--json]: an ONNX model
// as a perftune program (frontend/README.md), with a summary of what came in.
#include <sys/resource.h>

#include <chrono>
#include <iostream>
#include <memory>

#include "cli/command.h"
#include "frontend/network_summary.h"
#include "frontend/onnx_import.h"
#include "ir/input_error.h"
#include "ir/program_json.h"

namespace perftune::cli {
namespace {

struct ImportOptions {
  std::string model;
  std::string output;
  std::vector<std::string> inputs;
  std::string name;
  bool json = false;
};

double peak_memory_mb() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;  // kilobytes on Linux
}

void run(const ImportOptions& o) {
  frontend::OnnxImportOptions options;
  options.name = o.name;
  for (const std::string& spec : o.inputs) {
    const std::size_t eq = spec.find('=');
    if (eq == std::string::npos || eq == 0) throw InputError("--input", spec, "NAME=DIMS, e.g. input=1x3x224x224");
    options.input_shapes[spec.substr(0, eq)] = frontend::parse_dims(spec.substr(eq + 1), "--input " + spec.substr(0, eq));
  }
  const auto start = std::chrono::steady_clock::now();
  const frontend::ImportedNetwork network = frontend::import_onnx(o.model, options);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const frontend::NetworkSummary summary = frontend::summarize_network(network, seconds);
  if (!o.output.empty()) save_program_file(network.program, o.output);
  auto json = frontend::to_json(summary);
  json["peak_memory_mb"] = peak_memory_mb();
  if (!o.output.empty()) json["program"] = o.output;
  if (o.json) {
    print_json(json.dump(2));
  } else {
    std::cout << frontend::summary_text(summary) << "  peak memory " << json["peak_memory_mb"].get<double>() << " MB\n";
    if (!o.output.empty()) std::cout << "wrote " << o.output << " (weights as parameters, without their values)\n";
  }
}

const bool registered = register_command({"import", "Import an ONNX model as a perftune program (shapes inferred, constants folded)",
  [](CLI::App& app) {
    auto o = std::make_shared<ImportOptions>();
    app.add_option("model", o->model, "ONNX model (.onnx), opset 7-17")->required();
    app.add_option("--output", o->output, "Write the program here (JSON, without weight values)");
    app.add_option("--input", o->inputs, "Static shape of a graph input, NAME=DIMS (e.g. input=1x3x224x224); repeatable");
    app.add_option("--name", o->name, "The program's name (default: the graph's name, else the file's stem)");
    app.add_flag("--json", o->json, "Print the summary as JSON");
    app.callback([o] { run(*o); });
  }});

}  // namespace
}  // namespace perftune::cli
