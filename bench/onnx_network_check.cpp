// onnx_network_check MODEL.onnx DATA_SET [--input NAME=DIMS ...]: imports a network and runs it
// whole, unfused, through Halide and (with --reference) the reference interpreter, with its own
// weights, on an ONNX test data set's inputs (input_0.pb, ...; scripts/models writes them from
// torch), and prints as JSON the largest relative error against the set's outputs. A check of the
// frontend and the lowering on real networks, too slow for a unit test.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <string>

#include <nlohmann/json.hpp>

#include "frontend/onnx_import.h"
#include "hardware/halide/worker/unfused.h"
#include "hardware/reference/reference_interpreter.h"
#include "ir/input_error.h"

namespace {

using perftune::frontend::KnownTensor;

// max |got - want| / max |want|: the error relative to the output's scale (elementwise relative
// error is meaningless at outputs near zero).
double relative_error(const std::vector<float>& got, const KnownTensor& want) {
  double diff = 0, scale = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    diff = std::max(diff, std::fabs(static_cast<double>(got[i]) - want.values[i]));
    scale = std::max(scale, std::fabs(want.values[i]));
  }
  return scale > 0 ? diff / scale : diff;
}

}  // namespace

int main(int argc, char** argv) {
  namespace fs = std::filesystem;
  if (argc < 3 || std::string(argv[1]) == "--help") {
    std::fprintf(stderr, "usage: onnx_network_check MODEL.onnx DATA_SET [--reference] [--input NAME=DIMS ...]\n");
    return argc < 3 ? 2 : 0;
  }
  try {
    perftune::frontend::OnnxImportOptions options;
    bool reference = false;
    for (int i = 3; i < argc; ++i) {
      const std::string arg = argv[i];
      if (arg == "--reference") {
        reference = true;
      } else if (arg == "--input" && i + 1 < argc) {
        const std::string spec = argv[++i];
        const auto eq = spec.find('=');
        options.input_shapes[spec.substr(0, eq)] = perftune::frontend::parse_dims(spec.substr(eq + 1), "--input");
      } else {
        throw std::invalid_argument("unknown argument " + arg);
      }
    }
    const auto start = std::chrono::steady_clock::now();
    const auto network = perftune::frontend::import_onnx(argv[1], options);
    const double import_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::vector<std::vector<float>> activations;
    for (std::size_t i = 0; i < network.inputs.size(); ++i)
      activations.push_back(perftune::frontend::load_tensor_file((fs::path(argv[2]) / ("input_" + std::to_string(i) + ".pb")).string()).floats());
    const auto parameters = perftune::parameter_values(network.program, activations);
    const auto run_start = std::chrono::steady_clock::now();
    const auto outputs = perftune::halide::run_unfused(network.program, parameters);
    const double run_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - run_start).count();
    std::vector<perftune::OpId> computed;
    for (perftune::OpId id : network.program.outputs())
      if (!network.program.op(id).is_parameter()) computed.push_back(id);
    nlohmann::ordered_json result = {{"model", argv[1]}, {"import_seconds", import_seconds}, {"halide_seconds", run_seconds}};
    double worst = 0, worst_reference = 0;
    const auto values = reference ? perftune::interpret(network.program, parameters) : std::vector<std::vector<float>>{};
    for (std::size_t k = 0; k < network.outputs.size(); ++k) {
      const KnownTensor want = perftune::frontend::load_tensor_file((fs::path(argv[2]) / ("output_" + std::to_string(k) + ".pb")).string());
      const auto at = static_cast<std::size_t>(std::find(computed.begin(), computed.end(), network.outputs[k]) - computed.begin());
      if (static_cast<std::int64_t>(outputs.at(at).size()) != want.count()) throw std::runtime_error("output " + std::to_string(k) + " has the wrong size");
      worst = std::max(worst, relative_error(outputs[at], want));
      if (reference) worst_reference = std::max(worst_reference, relative_error(values[network.outputs[k]], want));
    }
    result["max_relative_error"] = worst;
    if (reference) result["reference_max_relative_error"] = worst_reference;
    std::cout << result.dump(2) << "\n";
    return 0;
  } catch (const std::exception& error) {
    std::fprintf(stderr, "onnx_network_check: %s\n", error.what());
    return 1;
  }
}
