#pragma once
// `perftune export RUN_DIR --output DIR`: a network tuned by `perftune tune` (network_tuner.h) as
// a result a user ships. Every kernel gets the fastest schedule its records hold on the run's
// device; a kernel with none keeps its heuristic and is listed as untuned. A run still going, or
// killed, exports what it has recorded so far.
//
// DIR/NAME.a, NAME.h, HalideRuntime.h, NAME.weights   the library (export/halide_export.h)
// DIR/tuning.json   per kernel: its function, config, measured time, device and instances
// DIR/example/      CMakeLists.txt and main.cpp: links NAME.a, runs it on input files and times it
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace perftune {

struct NetworkExportOptions {
  std::string name;                   // the entry point's; default: the network's name as a C identifier
  std::optional<double> at_seconds;   // only the records the run had after this much tuning time (below)
  bool profile = false;               // kernels built with Halide's profiler (NetworkLibrary::profile)
};

// Returns what tuning.json holds: "network", "source", "device", "run", "complete" (false for a
// run still going or killed), "library", "estimated_latency_seconds" (the sum of the chosen
// kernels' measured times; null while one is untuned), "untuned" (kernels without a measured
// schedule), "fell_back" (kernels whose recorded schedule Halide rejected ahead of time) and
// "kernels". Throws InputError for a
// folder `perftune tune` did not write, std::runtime_error when compiling fails.
// With `options.at_seconds`, only the records the run had after that much tuning time count (its rounds
// in network.json say when): the library a shorter run would have given; 0 gives every kernel
// its heuristic schedule.
nlohmann::ordered_json export_network(const std::string& run_dir, const std::string& output, const NetworkExportOptions& options = {});

}  // namespace perftune
