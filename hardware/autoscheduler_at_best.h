#pragma once
// One of Halide's autoschedulers at its best settings on a kernel: run with Halide's generic
// machine parameters and with this machine's, the faster kept (its settings say which). Halide's
// defaults are tuned for a large server; this machine's can be worse, so neither alone is the
// autoscheduler at its best.
#include <string>
#include <utility>

#include "hardware/halide_backend.h"

namespace perftune {

inline PeerMeasurement measure_autoscheduler_at_best(HalideBackend& backend, const Kernel& kernel, const std::string& name) {
  PeerMeasurement best{name, "", MeasureResult::failure(MeasureStatus::kRuntimeError, "not run")};
  for (const auto& [machine, label] : {std::pair{std::string(kGenericMachineParams), std::string("Halide's generic")},
                                       std::pair{host_machine_params(backend.options().threads), std::string("this machine")}}) {
    const MeasureResult r = backend.measure_autoscheduled(kernel, {name, machine, {}}).result;
    const bool better = r.ok() && (!best.result.ok() || r.seconds < best.result.seconds);
    if (better || (!best.result.ok() && best.settings.empty())) best = {name, "machine " + machine + " (" + label + ")", r};
  }
  return best;
}

}  // namespace perftune
