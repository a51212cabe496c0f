#pragma once
// What the machine could do when a sitting measured: whole sittings on this project's shared
// machines can run twice as fast on one day as on another (the same config of the same matmul),
// and a sitting's own figures do not show it. So a sitting first times three
// micro-benchmarks of `perftune calibrate` (calibrate.h: the FMA kernel on one core and on the
// backend's threads, the DRAM triad on them; about 1 s) and appends them to a machine_checks.jsonl:
// a live experiment before its runs' first measurement and its re-measure's
// (experiments/experiment_runner.cpp, listed in its summary), `perftune collect` and `perftune
// remeasure` before their first (OUTPUT.machine_checks.jsonl beside their log).
#include <functional>
#include <optional>
#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

namespace perftune {

struct MachineCheck {
  std::string phase;       // "runs", "remeasure", "collect"
  double unix_seconds = 0;
  unsigned threads = 1;
  double fma_flops_one_core = 0;      // f32 FLOP/s
  double fma_flops_threads = 0;       // on `threads` threads
  double triad_bandwidth_threads = 0; // bytes/s

  nlohmann::ordered_json to_json() const;
};

// Times the three benchmarks now, each for about `seconds`. threads 0 = the machine's cores.
MachineCheck check_machine(const std::string& phase, unsigned threads, double seconds = 0.3);

// Appends `check` to `file` as a JSON line, flushed: a kill loses nothing written before.
void append_machine_check(const std::string& file, const MachineCheck& check);
// Every check `file` holds, oldest first; empty when there is no file. A torn last line (a kill
// while it was written) is left out; any other line that is not a check throws InputError naming
// the file and line.
nlohmann::ordered_json read_machine_checks(const std::string& file);

// The check as a FirstMeasureHook callback (hardware/wrappers/first_measure_hook.h) for a sitting that
// logs to `file`: on its first call (its copies included) checks the machine on the backend's
// `threads` (HalideBackendOptions::threads: 0 or less, the machine's cores),
// appends the check, and writes it to `log` (when given) as "machine check before the PHASE: ...";
// later calls do nothing, so every backend of a sitting (a round each) may hold it.
std::function<void()> machine_check_hook(std::string phase, int threads, std::string file, std::ostream* log);

// When the checks' FMA rates (one core, or the threads) differ by more than `tolerance` (a share of
// the slower), the sittings ran on different machines, whose figures do not compare: a sentence
// saying so, naming the two rates; else nothing. The FMA kernel reads within 0.1% from sitting to
// sitting on one machine here, and 2x apart across this project's two kinds of host.
std::optional<std::string> machines_differ(const nlohmann::ordered_json& checks, double tolerance = 0.2);

// One line for a progress log: "FMA 118 GFLOP/s on 1 core, 236 on 2; triad 35.0 GB/s"; of a
// check as read_machine_checks gives it, too.
std::string describe(const MachineCheck& check);
std::string describe(const nlohmann::ordered_json& check);

}  // namespace perftune
