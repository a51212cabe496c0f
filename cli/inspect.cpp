// perftune inspect SOURCE [--json]: summarize any supported source.
#include <chrono>
#include <iostream>
#include <memory>

#include "cli/command.h"
#include "frontend/network_summary.h"
#include "ir/corpus_summary.h"
#include "ir/source.h"

namespace perftune::cli {
namespace {

struct InspectOptions {
  std::string source;
  bool json = false;
};

const bool registered = register_command({"inspect", "Summarize a source: TPU protobuf, Kernel Tuner cache, npz, record log (or a folder of them), program or ONNX model",
  [](CLI::App& app) {
    auto options = std::make_shared<InspectOptions>();
    app.add_option("source", options->source, "File (or folder of record logs) to summarize")->required();
    app.add_flag("--json", options->json, "Print the summary as JSON");
    app.callback([options] {
      if (options->source.ends_with(".onnx")) {  // a network: what came in, and its kernels
        const auto start = std::chrono::steady_clock::now();
        const frontend::ImportedNetwork network = frontend::import_onnx(options->source);
        const auto summary = frontend::summarize_network(network, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
        if (options->json) print_json(frontend::to_json(summary).dump(2));
        else std::cout << frontend::summary_text(summary);
        return;
      }
      const Corpus corpus = load_source(options->source);
      for (const std::string& note : corpus.notes) std::cerr << "perftune inspect: " << note << "\n";
      const auto summary = summarize(corpus);
      if (options->json) print_json(summary.dump(2));
      else std::cout << summary_table(summary);
    });
  }});

}  // namespace
}  // namespace perftune::cli
