// perftune calibrate [--json] [--output PATH] [--seconds S]: measure this CPU and write its spec.
#include <cstdio>
#include <iostream>
#include <memory>

#include "cli/command.h"
#include "offline/calibrate.h"

namespace perftune::cli {
namespace {

struct CalibrateOptions {
  std::string output = "configs/hardware/host.json";
  double seconds = 0.4;
  bool json = false;
};

const bool registered = register_command({"calibrate",
  "Measure this CPU's FLOP/s, memory bandwidth and caches; write its device spec (host.json)",
  [](CLI::App& app) {
    auto options = std::make_shared<CalibrateOptions>();
    app.add_option("--output", options->output, "Where to write the device spec")->capture_default_str();
    app.add_option("--seconds", options->seconds, "Duration of each micro-benchmark (4 of them)")
        ->check(CLI::Range(0.01, 3.0))->capture_default_str();
    app.add_flag("--json", options->json, "Print the measurements and the spec as JSON");
    app.callback([options] {
      CalibrationOptions calibration;
      calibration.seconds_per_benchmark = options->seconds;
      const CalibrationResult result = calibrate_host(calibration);
      const DeviceSpec spec = host_device_spec(result);
      save_device_spec(spec, options->output);
      if (options->json) {
        nlohmann::ordered_json json;
        json["output"] = options->output;
        json["measured"] = calibration_to_json(result);
        json["spec"] = device_spec_to_json(spec);
        print_json(json.dump(2));
        return;
      }
      std::printf("cpu                 %s (%u cores, %d-bit vectors)\n", result.cpu_name.c_str(), result.cores,
                  result.vector_bytes * 8);
      std::printf("f32 FLOP/s          %.1f G (one core)   %.1f G (all cores)\n", result.flops_one_core / 1e9,
                  result.flops_all_cores / 1e9);
      std::printf("triad bandwidth     %.1f GB/s (one core)   %.1f GB/s (all cores)\n",
                  result.bandwidth_one_core / 1e9, result.bandwidth_all_cores / 1e9);
      std::printf("caches              L1d %lld KiB, L2 %lld KiB, L3 %lld KiB\n",
                  static_cast<long long>(result.caches.l1d / 1024), static_cast<long long>(result.caches.l2 / 1024),
                  static_cast<long long>(result.caches.l3 / 1024));
      std::printf("kernel call         %.2f ns\n", result.call_seconds * 1e9);
      std::printf("wrote               %s\n", options->output.c_str());
    });
  }});

}  // namespace
}  // namespace perftune::cli
