#include "autotuner/network/network_tasks.h"

#include <algorithm>
#include <filesystem>
#include <map>

#include "frontend/onnx_import.h"
#include "hardware/halide/cpu_program.h"
#include "hardware/halide/fusion_space.h"
#include "hardware/halide/halide_schedule.h"
#include "ir/input_error.h"

namespace perftune {

Program load_network(const std::string& path) {
  if (std::filesystem::path(path).extension() == ".onnx") return frontend::import_onnx(path).program;
  return load_cpu_program(path);
}

NetworkPartition partition_network(Program program, const std::string& file) {
  NetworkPartition network;
  network.program = std::move(program);
  std::optional<FusionPlan> plan = network_partition(network.program);
  if (!plan) throw InputError(file, "$", "a network whose greedy fusion stays legal once every kernel writes the values other kernels read");
  network.plan = std::move(*plan);
  if (network.plan.kernels.empty()) throw InputError(file, "$", "a network with at least one op to compute");
  std::map<std::string, std::size_t> task_of_key;
  for (std::size_t i = 0; i < network.plan.kernels.size(); ++i) {
    const Kernel& kernel = network.plan.kernels[i].kernel;
    auto [it, fresh] = task_of_key.emplace(kernel.key(), network.tasks.size());
    if (fresh) {
      NetworkTask task;
      task.kernel = kernel;
      try {
        task.space = std::make_shared<SearchSpace>(halide_schedule_space(kernel));
      } catch (const std::exception& error) {
        throw InputError(file, "$", "kernels the CPU backend can schedule; " + kernel.name() + ": " + error.what());
      }
      task.heuristic = heuristic_config(*task.space, kernel);
      network.tasks.push_back(std::move(task));
    }
    network.tasks[it->second].instances.push_back(i);
    network.task_of_kernel.push_back(it->second);
  }
  return network;
}

}  // namespace perftune
