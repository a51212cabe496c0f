#pragma once
// The fusion search space of a whole program: one binary knob fuse.<e> per fusible edge
// (ir/fusion.h), constrained to partitions the CPU backend can run as loop nests.
#include <optional>
#include <vector>

#include "ir/fusion.h"
#include "ir/search_space.h"

namespace perftune {

// Legal (acyclic) partitions that also follow XLA's CPU/GPU fusion rules: a dot, convolution or
// reduce fuses only into elementwise consumers (output fusion), and a kernel holds at most one of
// them (two reductions in one loop nest would recompute the inner one per outer element).
bool is_cpu_fusible(const Program& program, const FusionConfig& config);

// XLA's greedy elementwise fusion (FusionConfig::greedy_elementwise), trimmed to what the CPU
// backend runs: its edges in program order, each kept only when is_cpu_fusible still holds.
FusionConfig greedy_cpu_fusion(const Program& program);

// Greedy CPU fusion with every op whose value another kernel reads cut from its users inside its
// own kernel, so that each kernel writes out what others read: how a whole network is cut into
// the kernels it is tuned and collected as (autotuner/network/, offline/corpus_collection.h).
FusionConfig network_fusion(const Program& program);
// The network's kernels as it is tuned: partition(program, network_fusion(program)), or nullopt
// where that cut is not one the CPU backend runs.
std::optional<FusionPlan> network_partition(const Program& program);
// The network cut into blocks of `kernels_per_block` consecutive kernels of `plan` (its
// network_partition; the last block may be shorter), each a program of its own whose parameters
// are the values it reads from earlier blocks: sub-programs whose fusion placements a corpus
// measures and the fusion task ranks. Named NETWORK/block.I.
std::vector<Program> network_blocks(const Program& program, const FusionPlan& plan, std::size_t kernels_per_block);

// fusible_edges(program) without the edges is_cpu_fusible always rejects (a reduction into a
// non-elementwise consumer): knobs that could only ever be 0 would make sampling needlessly sparse.
std::vector<std::size_t> cpu_fusible_edges(const Program& program);

// What a fuse.<e> knob may say: fused or not (XLA's decision), or where the producer is computed
// for its consumer (hardware/halide/halide_schedule.h: 0 at root, 1 inlined, 2 at the consumer's tile).
enum class FusionChoices { kFusedOrNot, kPlacements };

// One knob fuse.<e> per cpu_fusible_edges() entry, and under kPlacements the knob `stages` = 1
// (hardware/halide/halide_schedule.h: every group scheduled as the kernel heuristic schedules a kernel).
// Throws std::invalid_argument if there is no such edge.
SearchSpace fusion_space(const Program& program, FusionChoices choices = FusionChoices::kFusedOrNot);

// The fusion decisions a config of fusion_space(program) (or any space with fuse.<e> knobs) means.
FusionConfig fusion_config_of(const Program& program, const SearchSpace& space, const Config& config);
// The config of fusion_space(program) that sets exactly `fusion`'s fusible edges (and `stages`
// to its one value).
Config fusion_space_config(const Program& program, const SearchSpace& space, const FusionConfig& fusion);

}  // namespace perftune
