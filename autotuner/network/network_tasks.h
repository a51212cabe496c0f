#pragma once
// A network as the kernels to tune: the program partitioned by XLA's greedy elementwise fusion as
// the CPU backend runs it (hardware/halide/fusion_space.h: each dot, convolution or reduction with the
// elementwise ops that follow it; network_fusion, hardware/halide/fusion_space.h), and identical kernels (equal content keys, ir/kernel.h) merged
// into one task: ResNet's repeated blocks are tuned once. Inside a kernel, where each producer is
// computed (inlined, at a tile of its consumer, at root) is a knob of the kernel's schedule space
// (hardware/halide/halide_schedule.h), so fusion placements are tuned with the tiles.
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "ir/fusion.h"
#include "ir/search_space.h"

namespace perftune {

struct NetworkTask {
  Kernel kernel;                              // the first instance (every instance has its key)
  std::shared_ptr<const SearchSpace> space;   // halide_schedule_space(kernel)
  Config heuristic;                           // the fallback schedule, measured first
  std::vector<std::size_t> instances;         // indices into NetworkPartition::plan.kernels
};

struct NetworkPartition {
  Program program;
  FusionPlan plan;
  std::vector<NetworkTask> tasks;             // in the order of their first instance
  std::vector<std::size_t> task_of_kernel;    // plan.kernels[i] is an instance of tasks[task_of_kernel[i]]
};

// The program of `path`: an ONNX model (frontend/onnx_import.h; weights keep their values) or a
// program JSON (hardware/halide/cpu_program.h; weights are inputs). Throws InputError naming the file.
Program load_network(const std::string& path);

// Throws InputError naming the network when it has no kernel, or a kernel the backend cannot schedule.
NetworkPartition partition_network(Program program, const std::string& file);

}  // namespace perftune
