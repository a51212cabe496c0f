#include "hardware/halide/worker/unfused.h"

#include <algorithm>
#include <map>
#include <set>
#include <stdexcept>

#include "hardware/halide/worker/lowering.h"
#include "hardware/reference/reference_interpreter.h"

namespace perftune::halide {

namespace {

std::vector<int> halide_extents(const Program& program, OpId id) {
  const auto& dims = program.op(id).shape.dims;
  return std::vector<int>(dims.rbegin(), dims.rend());
}

}  // namespace

std::vector<std::vector<float>> run_unfused(const Program& program, const std::vector<std::vector<float>>& parameters) {
  const std::vector<OpId> ordered = ordered_parameters(program);
  if (parameters.size() != ordered.size())
    throw std::invalid_argument("run_unfused: " + std::to_string(parameters.size()) + " inputs for " + std::to_string(ordered.size()) + " parameters");
  std::map<OpId, Halide::Buffer<float>> values;
  for (std::size_t i = 0; i < ordered.size(); ++i) {
    Halide::Buffer<float> buffer(halide_extents(program, ordered[i]));
    if (static_cast<std::size_t>(buffer.number_of_elements()) != parameters[i].size())
      throw std::invalid_argument("run_unfused: input " + std::to_string(i) + " has the wrong size");
    std::copy(parameters[i].begin(), parameters[i].end(), buffer.data());
    values[ordered[i]] = std::move(buffer);
  }
  // Pipelines of up to kChunk consecutive ops (topological order), each run on the buffers its
  // inputs left: Halide's compile time grows superlinearly with a pipeline's Funcs (minutes for a
  // network of a few hundred ops as one pipeline), while one pipeline per op would compile many
  // small ones for a short program. Every op is computed at root either way.
  constexpr std::size_t kChunk = 32;
  const Halide::Target target = Halide::get_jit_target_from_environment();
  std::vector<OpId> work;
  for (OpId id : program.topological_order())
    if (!program.op(id).is_leaf_value()) work.push_back(id);
  for (std::size_t first = 0; first < work.size(); first += kChunk) {
    const std::vector<OpId> chunk(work.begin() + static_cast<std::ptrdiff_t>(first),
                                  work.begin() + static_cast<std::ptrdiff_t>(std::min(work.size(), first + kChunk)));
    const std::set<OpId> members(chunk.begin(), chunk.end());
    Program body(program.name());
    std::map<OpId, OpId> local;  // program op -> body op
    std::vector<OpId> inputs;    // program ops read as the body's parameters, in parameter order
    for (OpId id : chunk) {
      std::vector<OpId> operands;
      for (OpId producer : program.operands(id)) {
        if (!local.count(producer)) {
          const Op& op = program.op(producer);
          if (op.is_leaf_value() && !op.is_parameter()) {
            local[producer] = body.add_op(op);  // a constant with its values
          } else {
            Op parameter;
            parameter.name = op.name;
            parameter.opcode = "parameter";
            parameter.shape = op.shape;
            parameter.parameter_number = static_cast<std::int64_t>(inputs.size());
            local[producer] = body.add_op(std::move(parameter));
            inputs.push_back(producer);
          }
        }
        operands.push_back(local.at(producer));
      }
      local[id] = body.add_op(program.op(id), operands);
    }
    const auto final_outputs = program.outputs();
    std::vector<OpId> written;  // chunk ops read after it, or the program's outputs
    for (OpId id : chunk) {
      const auto users = program.users(id);
      if (std::find(final_outputs.begin(), final_outputs.end(), id) != final_outputs.end() ||
          std::any_of(users.begin(), users.end(), [&](OpId u) { return !members.count(u); }))
        written.push_back(id);
    }
    LoweredKernel lowered = lower(body);
    for (std::size_t i = 0; i < lowered.inputs.size(); ++i) lowered.inputs[i].set(values.at(inputs.at(i)));
    for (Halide::Func& f : lowered.funcs)
      if (f.defined()) f.compute_root();
    std::vector<Halide::Func> outputs;
    std::vector<Halide::Buffer<>> buffers;
    for (OpId id : written) {
      outputs.push_back(lowered.funcs[local.at(id)]);
      buffers.emplace_back(Halide::Buffer<float>(halide_extents(program, id)));
    }
    Halide::Realization realization(buffers);
    Halide::Pipeline(outputs).realize(realization, target);
    for (std::size_t o = 0; o < written.size(); ++o) values[written[o]] = Halide::Buffer<float>(buffers[o]);
  }
  std::vector<std::vector<float>> results;
  for (OpId id : computed_outputs(program)) {
    const Op& op = program.op(id);
    if (!values.count(id) && op.is_constant() && op.literal) {  // a constant output is no kernel's work
      results.emplace_back(op.literal->begin(), op.literal->end());
      continue;
    }
    const Halide::Buffer<float>& b = values.at(id);
    results.emplace_back(b.data(), b.data() + b.number_of_elements());
  }
  return results;
}

}  // namespace perftune::halide
