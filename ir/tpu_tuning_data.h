#pragma once
// Importer for the TPU tuning data of the TpuGraphs project (../shared/data/tpu/*.pb):
//   a TuningData (repeated ModuleTuningData, field 1) or one bare ModuleTuningData at the top
//   level, told apart by their top-level fields (see detect_tpu_layout).
// A module whose runs carry tile configs (op_config) becomes one MeasuredKernel: the fused
// computation of the entry's root `fusion` instruction (else the entry computation itself),
// named after the module (the tuned instruction, e.g. "fusion.191"), with knobs tile.out.<d> =
// output_bounds[d], then tile.kernel.<d> = kernel_bounds[d] (convolution kernels), tile.in.<d>
// and tile.iter.<d> where the data has them (generic knobs in ir/knob_roles.h terms); a module
// whose runs record an empty tile config gets the one knob "tpu.run" = the run's index. Runs of
// the same config are kept as separate measurements. A space recorded over the measured configs, runtime compute_time_ns * 1e-9 s,
// `error` runs as kRuntimeError "recorded as failed", and `is_default` as default_index.
// Any other module (layout runs, module_config) becomes a whole Program, its runs
// Corpus::program_measurements (config empty: perftune does not read layout configs), and every
// `fusion` instruction in it a kernel without measurements.
// Format: "tpu-op-tuning" when every module is a tile-tuned kernel, else "tpu-module-tuning".
#include <string>

#include "ir/corpus.h"

namespace perftune {

// The device string the records carry: the data does not say which TPU generation.
inline constexpr const char* kTpuDevice = "tpu";
// The knob of modules whose runs carry no tile bounds at all.
inline constexpr const char* kTpuRunKnob = "tpu.run";

enum class TpuLayout { kTuningData, kModuleTuningData };

// Which top-level message `bytes` holds: a bare ModuleTuningData has fields 2-4 at the top level
// or a single field 1 whose payload looks like an HloModuleProto; anything else is TuningData.
TpuLayout detect_tpu_layout(const std::string& bytes);

// Throws InputError naming the file, the module or run and the byte offset for a truncated or
// corrupt message, and the module and run for a negative time or an unknown element type.
Corpus load_tpu_tuning_data(const std::string& path);
Corpus parse_tpu_tuning_data(const std::string& bytes, const std::string& file);

}  // namespace perftune
