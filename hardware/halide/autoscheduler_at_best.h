#pragma once
// One of Halide's autoschedulers at its best settings on a kernel: run with Halide's generic
// machine parameters and with this machine's, the faster kept (its settings say which). Halide's
// defaults are tuned for a large server; this machine's can be worse, so neither alone is the
// autoscheduler at its best. Adams2019's default beam search (32 wide) can outgrow the worker's
// memory on a large pipeline (a whole network as one pipeline); when both runs fail, it runs again
// with its greedy search (HL_BEAM_SIZE=1), Halide's own setting for a search that must be cheap.
#include <map>
#include <string>
#include <utility>

#include "hardware/halide/halide_peers.h"

namespace perftune {

inline PeerMeasurement measure_autoscheduler_at_best(HalidePeers& peers, const Kernel& kernel, const std::string& name) {
  PeerMeasurement best{name, "", MeasureResult::failure(MeasureStatus::kRuntimeError, "not run")};
  auto run_both = [&](const std::map<std::string, std::string>& env, const std::string& suffix) {
    for (const auto& [machine, label] : {std::pair{std::string(kGenericMachineParams), std::string("Halide's generic")},
                                         std::pair{host_machine_params(peers.options().threads), std::string("this machine")}}) {
      const MeasureResult r = peers.measure_autoscheduled(kernel, {name, machine, env}).result;
      const bool better = r.ok() && (!best.result.ok() || r.seconds < best.result.seconds);
      if (better || (!best.result.ok() && best.settings.empty())) best = {name, "machine " + machine + " (" + label + ")" + suffix, r};
    }
  };
  run_both({}, "");
  if (!best.result.ok() && name == "Adams2019") {
    // The runner's message ends with the reason (its last " | " part: "what(): std::bad_alloc").
    std::string failed = best.result.message.substr(best.result.message.rfind('|') == std::string::npos ? 0 : best.result.message.rfind('|') + 1);
    failed.erase(0, failed.find_first_not_of(' '));
    best.settings.clear();
    run_both({{"HL_BEAM_SIZE", "1"}}, ", greedy search (HL_BEAM_SIZE=1; the beam search failed: " + failed + ")");
  }
  return best;
}

}  // namespace perftune
