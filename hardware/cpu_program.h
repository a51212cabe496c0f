#pragma once
// The program of a file as the live CPU backend runs it: the project's program JSON, or the
// program a recorded source holds (the XLA module of a TPU .pb), its element types read as f32
// (the backend computes in f32; a bf16 kernel keeps its ops and shapes).
#include <string>

#include "ir/program.h"

namespace perftune {

// Throws InputError naming the file when it holds no program.
Program load_cpu_program(const std::string& path);

}  // namespace perftune
