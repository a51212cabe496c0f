#pragma once
// Importer for the TpuGraphs tile collection (.npz, one kernel per file; layout facts from the
// dataset's README, google-research-datasets/tpu_graphs): format "tpugraphs-npz".
//   node_feat (n, 140) float32     features per node in topological order; perftune reads the
//                                  root flag (column 0), the element type one-hot (2-20), the
//                                  shape dims (21-26), parameter_number (30), the window
//                                  (37-42 size, 45-50 stride, 53-58/61-66 padding, 69-74 and
//                                  77-82 dilations) and the layout minor_to_major (134-139)
//   node_opcode (n,) integer       TpuGraphs' opcode ids (tpu_graphs/process_data/xla/hlo_opcode.h);
//                                  an id outside that table becomes opcode "opcode.<id>"
//   edge_index (m, 2) integer      row [u, v]: u consumes the output of v (edge v -> u)
//   config_feat (c, 24) float32    per config: kernel_bounds 0-5, output_bounds 8-13, input_bounds
//                                  16-21 (6,7 / 14,15 / 22,23 are sums and products)
//   config_runtime (c,) int64      ns; config_runtime_normalizers (c,) int64: ns of the default
//                                  config in the same session (validated, not stored: the file
//                                  does not say which config is the default)
// Knobs: tile.out.<d> for d below the root's rank (output_bounds), plus tile.kernel.<d> and
// tile.in.<d> for the kernel/input bound columns that are non-zero in some config. Space:
// recorded over the configs. Device "tpu". Kernel name: the file name without ".npz".
// Shapes are rebuilt from zero-padded columns, so a rank is the number of leading non-zero dims.
#include <string>

#include "ir/corpus.h"
#include "ir/npz.h"

namespace perftune {

inline constexpr std::size_t kTpuGraphsNodeFeatures = 140;
inline constexpr std::size_t kTpuGraphsConfigFeatures = 24;

// Opcode name for a TpuGraphs opcode id ("opcode.<id>" when it is not in the table).
std::string tpugraphs_opcode_name(std::int64_t id);
// Inverse, for writing fixtures; 0 (TpuGraphs' "unknown") for an opcode not in the table.
std::int64_t tpugraphs_opcode_id(const std::string& name);

// Throws InputError naming the file and array for a missing array, a wrong dtype or shape, an
// edge naming no node, a cycle, a non-integral tile bound or a negative runtime.
Corpus load_tpugraphs_npz(const std::string& path);
Corpus tpugraphs_corpus(const Npz& arrays, const std::string& file, const std::string& name);

}  // namespace perftune
