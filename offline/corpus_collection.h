#pragma once
// Building a training corpus by measurement: for each listed program, random valid tile configs
// of each kernel of its partition (under no fusion and under a few random legal fusion configs),
// and random legal fusion configs of the whole program, measured into a record log. Resumable:
// what the log already holds (same device, kernel key and config) is not measured again, and
// the random choices depend only on the seed and the kernel, so a rerun plans the same configs.
//
// Collect config (JSON; program paths are relative to the config file's folder):
//   {"output": "corpus/cpu_corpus.jsonl",        // relative to the working directory
//    "seed": 1,
//    "programs": ["../programs/mlp_block_small.json", ...],   // files, or folders of *.json
//    "greedy_kernels": [{"program": "${PERFTUNE_DATA}/tpu/module_tuning_data_layout.pb",
//                        "kernels": ["fusion.convert.7575", ...]}],   // optional: kernels of a
//                                                 // program (an XLA module) under XLA's greedy
//                                                 // elementwise fusion, by name, tile spaces only;
//                                                 // skipped with a warning when the file is absent
//    "networks": {"train": ["../programs/networks/resnet50.json", ...],   // optional: whole
//                 "held_out": ["../programs/networks/resnet18.json", ...]}, // networks cut into the
//                                                 // kernels they are tuned as (network_fusion,
//                                                 // hardware/halide/fusion_space.h); each training
//                                                 // network's distinct kernels get tile spaces, and a
//                                                 // kernel a held-out network also has (same content
//                                                 // key) is kept off, so no kernel is on both sides
//                 "measure": "train",             // or "held_out": the test corpus, every kernel and
//                                                 // block of the held-out networks, none kept off
//                 "block_kernels": 4},            // also each network cut into blocks of 4 consecutive
//                                                 // kernels (network_blocks), each measured as a whole
//                                                 // program over its fusion placements, as programs are
//                                                 // below; its kernels kept off as the networks' are
//    "tile_configs_per_kernel": 24,               // distinct configs (all if fewer; 0: none)
//    "near_heuristic_share": 0.5,                 // of them, the heuristic schedule and walks of
//                                                 // 1-3 one-knob changes from it; the rest random
//    "fusion_variants_per_program": 3,            // random legal fusion configs whose kernels join
//    "program_fusion_configs": 12,                // whole-program fusion configs (plus none, greedy;
//                                                 // 0: none of them, not even those two)
//    "fused_kernel_configs": 0,                   // also the kernels the first N of those configs
//                                                 // (none, greedy, then the sampled) form, each
//                                                 // under the schedules the program ran it with
//                                                 // (heuristic, its fused producers placed as the
//                                                 // config places them: what the fusion task sums),
//                                                 // after every other kernel
//    "batch_size": 8,                             // configs per backend call (compiled in parallel)
//    "references": false,                         // also each kernel's peers (Backend::measure_peers:
//                                                 // Halide's autoschedulers, the library), as
//                                                 // reference lines, once per kernel
//    "model_picks": {"per_kernel": 8, "model": {...}, "strategy": {...}},   // optional: also the
//                                                 // configs a tuner's first round picks with a trained
//                                                 // model, per unfused kernel and whole program
//                                                 // (autotuner/model_picks.h): what that model gets
//                                                 // wrong about its own favourites, the region its
//                                                 // search visits and random draws rarely reach
//    "cpu": {"min_repeats": 3, "max_repeats": 10, "time_budget_seconds": 0.2,
//            "run_timeout_seconds": 60, "target_cv": 0.03, "threads": 2}}
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "hardware/backend.h"
#include "hardware/halide/halide_backend.h"
#include "ir/settings_table.h"

namespace perftune {

struct CollectSpec {
  std::string source;  // the config file
  std::string output;
  std::uint64_t seed = 1;
  std::vector<std::string> programs;  // resolved paths
  struct GreedyKernels {
    std::string program;  // resolved path
    std::vector<std::string> kernels;
  };
  std::vector<GreedyKernels> greedy_kernels;
  std::vector<std::string> networks;           // "networks"."train", resolved paths
  std::vector<std::string> held_out_networks;  // "networks"."held_out": their kernels are kept off
  bool measure_held_out_networks = false;      // "networks"."measure": "held_out" (the test corpus)
  std::size_t network_block_kernels = 0;       // "networks"."block_kernels"; 0: no blocks
  std::size_t tile_configs_per_kernel = 24;
  double near_heuristic_share = 0.0;  // of those, random walks from the heuristic schedule
  std::size_t fusion_variants_per_program = 3;
  std::size_t program_fusion_configs = 12;
  std::size_t fused_kernel_configs = 0;
  std::size_t fused_kernel_schedules = 0;  // each of those kernels topped up to this many schedules
  std::size_t batch_size = 8;
  bool references = false;
  std::size_t model_picks_per_kernel = 0;  // "model_picks"."per_kernel"; 0: none
  nlohmann::json model_picks;              // the section as written, for autotuner/model_picks.h
  HalideBackendOptions cpu;
  bool plan_only = false;  // plan and count, measure nothing (perftune collect --plan)
};

// Every key of a collect config, declared once (docs/settings.md); the program paths are resolved
// by load_collect_spec against the config's folder.
const SettingsTable<CollectSpec>& collect_settings();

// Throws InputError naming the file and JSON path of a bad field (unknown key, zero count, a
// program that does not exist, neither programs nor training networks).
CollectSpec load_collect_spec(const std::string& path);

struct CollectProgress {
  std::size_t done = 0;     // measured in this run
  std::size_t planned = 0;  // to measure in this run (excludes what the log already held)
  std::size_t failed = 0;   // of `done`, not ok
  double elapsed_seconds = 0.0;
  std::size_t references_done = 0, references_planned = 0;  // kernels whose references (measured last)
};

struct CollectSummary {
  std::size_t planned = 0;  // configs to measure in this run (the log's are skipped)
  std::size_t measured = 0, skipped = 0, failed = 0;
  std::size_t kernels = 0;  // distinct kernels (tile spaces and whole programs) in the plan
  std::size_t reference_kernels = 0;  // kernels whose references are measured in this run
  std::size_t log_records = 0;  // records in the log after the run
  double seconds = 0.0;
  std::vector<std::string> warnings;  // kernels left out (unsupported by the backend)
  std::size_t held_out_kernels = 0;   // kernels left out of the plan: the held-out networks' plan has them
};

// Up to n configs of `space` to measure beside the planned ones; `anchors` are what a tuner would
// measure first (a kernel's unscheduled and heuristic schedules; a program's no-fusion and greedy
// placements).
using ProposeConfigs =
    std::function<std::vector<Config>(const Kernel& kernel, const SearchSpace& space, std::span<const Config> anchors, std::size_t n)>;

// Measures the plan with `backend`, appending to spec.output; `progress` is called after each batch.
// `propose` plans spec.model_picks_per_kernel more configs per kernel (std::invalid_argument when
// the spec asks for picks and none is given). A rerun with the same proposer plans the same configs.
CollectSummary collect_corpus(const CollectSpec& spec, Backend& backend,
                              const std::function<void(const CollectProgress&)>& progress = {},
                              const ProposeConfigs& propose = {});

// "[#######.......] 120/400 records  3 failed  96.0/min  eta 2m55s" for a terminal; once the
// records are done, "  references 3/299" after it.
std::string progress_bar(const CollectProgress& progress, std::size_t width = 30);

}  // namespace perftune
