#include "hardware/halide/unfused.h"

#include <stdexcept>

#include "hardware/halide/lowering.h"

namespace perftune::halide {

std::vector<std::vector<float>> run_unfused(const Program& program, const std::vector<std::vector<float>>& parameters) {
  LoweredKernel lowered = lower(program);
  if (parameters.size() != lowered.inputs.size())
    throw std::invalid_argument("run_unfused: " + std::to_string(parameters.size()) + " inputs for " + std::to_string(lowered.inputs.size()) + " parameters");
  const auto extents_of = [&](OpId id) {
    const auto& dims = program.op(id).shape.dims;
    return std::vector<int>(dims.rbegin(), dims.rend());
  };
  std::vector<Halide::Buffer<float>> inputs;
  for (std::size_t i = 0; i < lowered.inputs.size(); ++i) {
    Halide::Buffer<float> buffer(extents_of(lowered.input_ops[i]));
    if (static_cast<std::size_t>(buffer.number_of_elements()) != parameters[i].size())
      throw std::invalid_argument("run_unfused: input " + std::to_string(i) + " has the wrong size");
    std::copy(parameters[i].begin(), parameters[i].end(), buffer.data());
    lowered.inputs[i].set(buffer);
    inputs.push_back(std::move(buffer));
  }
  std::vector<Halide::Func> outputs;
  for (OpId id = 0; id < program.size(); ++id)
    if (lowered.funcs[id].defined()) lowered.funcs[id].compute_root();
  for (OpId id : lowered.outputs) outputs.push_back(lowered.funcs[id]);
  Halide::Pipeline pipeline(outputs);
  std::vector<Halide::Buffer<>> buffers;
  for (OpId id : lowered.outputs) buffers.emplace_back(Halide::Buffer<float>(extents_of(id)));
  Halide::Realization realization(buffers);
  pipeline.realize(realization, Halide::get_jit_target_from_environment());
  std::vector<std::vector<float>> values;
  for (const Halide::Buffer<>& b : buffers) {
    const float* data = static_cast<const float*>(b.data());
    values.emplace_back(data, data + b.number_of_elements());
  }
  return values;
}

}  // namespace perftune::halide
