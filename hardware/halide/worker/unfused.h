#pragma once
// A whole program run through Halide with every op computed at root (no fusion, no tiling): the
// simplest schedule, for checking the lowering of every op against a reference (ONNX's node
// suite, a network against another framework's output) rather than for speed.
#include <vector>

#include "ir/program.h"

namespace perftune::halide {

// Values of the program's computed outputs (computed_outputs() order), given one buffer per
// parameter in Kernel::parameters() order. Throws UnsupportedProgram for an op the lowering lacks,
// Halide::CompileError and friends for what Halide rejects.
std::vector<std::vector<float>> run_unfused(const Program& program, const std::vector<std::vector<float>>& parameters);

}  // namespace perftune::halide
