#pragma once
// The program of a file as the live CPU backend runs it: the project's program JSON, or the
// program a recorded source holds (the XLA module of a TPU .pb), its element types read as f32
// (the backend computes in f32; a bf16 kernel keeps its ops and shapes).
#include <optional>
#include <string>

#include "ir/fusion.h"
#include "ir/kernel.h"
#include "ir/program.h"

namespace perftune {

// Throws InputError naming the file when it holds no program.
Program load_cpu_program(const std::string& path);

// The kernel of `program` partitioned by `fusion` whose name (or content key) is `name`, e.g. an
// XLA module's fused kernel under XLA's greedy fusion; nullopt if none is. Without a match,
// `available` (when given) receives the kernels' names, comma-separated, for the error message.
std::optional<Kernel> find_partition_kernel(const Program& program, const FusionConfig& fusion, const std::string& name,
                                            std::string* available = nullptr);

}  // namespace perftune
