#pragma once
// What a campaign over a program JSON tunes on a live backend: one kernel of the unfused program
// over its Halide schedule space ("kernel": NAME, hardware/halide/halide_schedule.h), or the whole
// program over its fusion space ("kernel": "fusion"; the program is then one kernel whose knobs
// are fuse.<e> placements), or the whole program as one kernel over its schedule space ("kernel":
// "program": placements and the root stage's schedule together), or a kernel of XLA's greedy
// elementwise fusion ("kernel": "greedy:NAME"). The program may be the project's JSON or the XLA
// module of a TPU .pb ("program": "${PERFTUNE_DATA}/tpu/module_tuning_data_layout.pb").
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "autotuner/campaign/campaign.h"
#include "ir/kernel.h"
#include "ir/search_space.h"

namespace perftune {

struct ProgramTarget {
  Kernel kernel;
  std::shared_ptr<const SearchSpace> space;
  // Configs to beat, by name, measured first: a kernel's "unscheduled" (Halide's default: every
  // stage at root, untiled, scalar, serial) and "heuristic" (a first hand schedule); a program's
  // "no_fusion" and "greedy_elementwise" (XLA's first pass: fuse every elementwise consumer).
  std::vector<std::pair<std::string, Config>> defaults;
};

// Throws InputError naming $.source.kernel when the program has no such kernel (listing them).
ProgramTarget program_target(const Campaign& campaign);

}  // namespace perftune
