#pragma once
// What the machine could do when a live experiment measured: whole sittings on this project's
// shared machines run 1.3-2.3x apart (the same 1024^3 matmul config at 4.3 ms one day, 10-13 ms
// another), and a sitting's own figures do not show it. So a live sitting first times three
// micro-benchmarks of `perftune calibrate` (hardware/calibrate.h: the FMA kernel on one core and on
// the backend's threads, the DRAM triad on them; about 1 s) before its first measurement, and
// again before the re-measure phase's, and appends them to OUTPUT/machine_checks.jsonl; the
// summary lists every line, so a reader sees which sittings ran on a slower machine before
// comparing their figures.
#include <string>

#include <nlohmann/json.hpp>

namespace perftune {

struct MachineCheck {
  std::string phase;       // "runs" or "remeasure"
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

// One line for a progress log: "FMA 118 GFLOP/s on 1 core, 236 on 2; triad 35.0 GB/s"; of a
// check as read_machine_checks gives it, too.
std::string describe(const MachineCheck& check);
std::string describe(const nlohmann::ordered_json& check);

}  // namespace perftune
