#include "ir/hlo_program.h"

#include <unordered_map>
#include <unordered_set>

#include "ir/input_error.h"

namespace perftune {

Shape shape_from_proto(const proto::ShapeProto& shape, const std::string& file, const std::string& place) {
  Shape result;
  const auto type = element_type_from_number(shape.element_type());
  if (!type || *type == ElementType::kInvalid)
    throw InputError(file, place, "a known element type (xla::PrimitiveType), not " + std::to_string(shape.element_type()));
  result.element_type = *type;
  result.dims.assign(shape.dimensions().begin(), shape.dimensions().end());
  if (auto problem = shape_problem(make_shape(ElementType::kF32, result.dims))) throw InputError(file, place + ", shape", *problem);
  if (shape.has_layout())
    result.minor_to_major.assign(shape.layout().minor_to_major().begin(), shape.layout().minor_to_major().end());
  for (int i = 0; i < shape.tuple_shapes_size(); ++i)
    result.tuple_shapes.push_back(shape_from_proto(shape.tuple_shapes(i), file, place + ", tuple element " + std::to_string(i)));
  return result;
}

namespace {

Window window_from_proto(const proto::Window& window) {
  Window result;
  for (const auto& d : window.dimensions()) {
    result.size.push_back(d.size());
    result.stride.push_back(d.stride());
    result.pad_low.push_back(d.padding_low());
    result.pad_high.push_back(d.padding_high());
    result.window_dilation.push_back(d.window_dilation());
    result.base_dilation.push_back(d.base_dilation());
  }
  return result;
}

ConvolutionDims convolution_from_proto(const proto::ConvolutionDimensionNumbers& c) {
  ConvolutionDims r;
  r.input_batch = c.input_batch_dimension();
  r.input_feature = c.input_feature_dimension();
  r.input_spatial.assign(c.input_spatial_dimensions().begin(), c.input_spatial_dimensions().end());
  r.kernel_input_feature = c.kernel_input_feature_dimension();
  r.kernel_output_feature = c.kernel_output_feature_dimension();
  r.kernel_spatial.assign(c.kernel_spatial_dimensions().begin(), c.kernel_spatial_dimensions().end());
  r.output_batch = c.output_batch_dimension();
  r.output_feature = c.output_feature_dimension();
  r.output_spatial.assign(c.output_spatial_dimensions().begin(), c.output_spatial_dimensions().end());
  return r;
}

DotDims dot_from_proto(const proto::DotDimensionNumbers& d) {
  DotDims r;
  r.lhs_contracting.assign(d.lhs_contracting_dimensions().begin(), d.lhs_contracting_dimensions().end());
  r.rhs_contracting.assign(d.rhs_contracting_dimensions().begin(), d.rhs_contracting_dimensions().end());
  r.lhs_batch.assign(d.lhs_batch_dimensions().begin(), d.lhs_batch_dimensions().end());
  r.rhs_batch.assign(d.rhs_batch_dimensions().begin(), d.rhs_batch_dimensions().end());
  return r;
}

// Converts computations on demand so that a callee is built before its caller and only once.
class ModuleConverter {
 public:
  ModuleConverter(const proto::HloModuleProto& module, std::string file, std::string place)
      : module_(module), file_(std::move(file)), place_(std::move(place)) {
    for (int i = 0; i < module.computations_size(); ++i) by_id_[module.computations(i).id()] = i;
  }

  std::shared_ptr<const Program> computation(std::int64_t id, const std::string& caller) {
    if (auto done = built_.find(id); done != built_.end()) return done->second;
    const auto index = by_id_.find(id);
    if (index == by_id_.end())
      throw InputError(file_, place_ + ", " + caller, "a called computation id present in the module, not " + std::to_string(id));
    // XLA call graphs are shallow (a while body calling a reduce body, a few levels); the limit
    // keeps a crafted chain of calls from exhausting the stack.
    constexpr std::size_t kMaxCallDepth = 256;
    if (in_progress_.size() >= kMaxCallDepth)
      throw InputError(file_, place_ + ", " + caller, "calls nested at most " + std::to_string(kMaxCallDepth) + " deep");
    if (!in_progress_.insert(id).second)
      throw InputError(file_, place_ + ", " + caller, "a call graph without recursion, but computation " + std::to_string(id) + " calls itself");
    auto program = build(module_.computations(index->second));
    in_progress_.erase(id);
    built_[id] = program;
    return program;
  }

  std::map<std::int64_t, std::shared_ptr<const Program>> all() {
    for (const auto& c : module_.computations()) computation(c.id(), "computation '" + c.name() + "'");
    return {built_.begin(), built_.end()};
  }

 private:
  std::shared_ptr<const Program> build(const proto::HloComputationProto& c) {
    const std::string where = place_ + ", computation '" + c.name() + "'";
    if (c.instructions_size() == 0) throw InputError(file_, where, "a computation with at least one instruction");
    auto program = std::make_shared<Program>(c.name());
    std::unordered_map<std::int64_t, OpId> op_of_id;
    // Ops first, edges second: HLO lists instructions in post order, but a forward reference
    // must still resolve (and a cycle is then reported by check_acyclic).
    for (const auto& instr : c.instructions()) {
      const std::string at = where + ", instruction '" + instr.name() + "'";
      Op op;
      op.name = instr.name();
      op.opcode = instr.opcode();
      op.shape = shape_from_proto(instr.shape(), file_, at);
      op.dimensions.assign(instr.dimensions().begin(), instr.dimensions().end());
      if (instr.has_window() && instr.window().dimensions_size() > 0) op.window = window_from_proto(instr.window());
      if (instr.has_convolution_dimension_numbers()) op.convolution = convolution_from_proto(instr.convolution_dimension_numbers());
      if (instr.has_dot_dimension_numbers()) op.dot = dot_from_proto(instr.dot_dimension_numbers());
      if (op.is_parameter()) op.parameter_number = instr.parameter_number();
      op.fusion_kind = instr.fusion_kind();
      for (std::int64_t callee : instr.called_computation_ids()) op.called.push_back(computation(callee, at));
      if (!op_of_id.emplace(instr.id(), program->add_op(std::move(op))).second)
        throw InputError(file_, at, "a unique instruction id, but id " + std::to_string(instr.id()) + " repeats");
    }
    for (const auto& instr : c.instructions()) {
      const OpId consumer = op_of_id.at(instr.id());
      for (std::int64_t operand : instr.operand_ids()) {
        const auto producer = op_of_id.find(operand);
        if (producer == op_of_id.end())
          throw InputError(file_, where + ", instruction '" + instr.name() + "'",
                           "operand ids of instructions in the same computation, not " + std::to_string(operand));
        program->add_operand(consumer, producer->second);
      }
    }
    if (c.root_id() != 0 || op_of_id.count(0)) {
      const auto root = op_of_id.find(c.root_id());
      if (root == op_of_id.end())
        throw InputError(file_, where, "a root_id naming one of its instructions, not " + std::to_string(c.root_id()));
      program->set_root(root->second);
    }
    program->check_acyclic(file_);
    return program;
  }

  const proto::HloModuleProto& module_;
  std::string file_, place_;
  std::unordered_map<std::int64_t, int> by_id_;
  std::unordered_map<std::int64_t, std::shared_ptr<const Program>> built_;
  std::unordered_set<std::int64_t> in_progress_;
};

}  // namespace

HloModule import_hlo_module(const proto::HloModuleProto& module, const std::string& file, const std::string& place) {
  if (module.computations_size() == 0) throw InputError(file, place, "an HloModuleProto with at least one computation");
  ModuleConverter converter(module, file, place);
  HloModule result;
  result.name = module.name();
  result.computations = converter.all();
  // The entry by id, else by name, else the last computation (XLA writes the entry last).
  std::optional<std::int64_t> entry;
  for (const auto& c : module.computations())
    if ((module.entry_computation_id() != 0 && c.id() == module.entry_computation_id()) ||
        (!entry && !module.entry_computation_name().empty() && c.name() == module.entry_computation_name()))
      entry = c.id();
  if (!entry) {
    if (module.entry_computation_id() != 0 || !module.entry_computation_name().empty())
      throw InputError(file, place, "an entry computation present in the module ('" + module.entry_computation_name() + "', id " +
                                        std::to_string(module.entry_computation_id()) + ")");
    entry = module.computations(module.computations_size() - 1).id();
  }
  result.entry = result.computations.at(*entry);
  return result;
}

}  // namespace perftune
