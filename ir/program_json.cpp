#include "ir/program_json.h"

#include <fstream>
#include <map>
#include <memory>

#include "ir/input_error.h"

namespace perftune {

namespace {

nlohmann::ordered_json window_to_json(const Window& w) {
  nlohmann::ordered_json j;
  j["size"] = w.size;
  if (!w.stride.empty()) j["stride"] = w.stride;
  if (!w.pad_low.empty()) j["pad_low"] = w.pad_low;
  if (!w.pad_high.empty()) j["pad_high"] = w.pad_high;
  if (!w.window_dilation.empty()) j["window_dilation"] = w.window_dilation;
  if (!w.base_dilation.empty()) j["base_dilation"] = w.base_dilation;
  return j;
}

Window window_from_json(const JsonView& j) {
  j.expect_keys({"size", "stride", "pad_low", "pad_high", "window_dilation", "base_dilation"});
  Window w;
  w.size = j.at("size").as_int_list();
  auto optional_list = [&](const char* key) {
    const auto member = j.find(key);
    return member ? member->as_int_list() : std::vector<std::int64_t>{};
  };
  w.stride = optional_list("stride");
  w.pad_low = optional_list("pad_low");
  w.pad_high = optional_list("pad_high");
  w.window_dilation = optional_list("window_dilation");
  w.base_dilation = optional_list("base_dilation");
  return w;
}

nlohmann::ordered_json convolution_to_json(const ConvolutionDims& c) {
  return {{"input_batch", c.input_batch},
          {"input_feature", c.input_feature},
          {"input_spatial", c.input_spatial},
          {"kernel_input_feature", c.kernel_input_feature},
          {"kernel_output_feature", c.kernel_output_feature},
          {"kernel_spatial", c.kernel_spatial},
          {"output_batch", c.output_batch},
          {"output_feature", c.output_feature},
          {"output_spatial", c.output_spatial}};
}

ConvolutionDims convolution_from_json(const JsonView& j) {
  j.expect_keys({"input_batch", "input_feature", "input_spatial", "kernel_input_feature",
                 "kernel_output_feature", "kernel_spatial", "output_batch", "output_feature",
                 "output_spatial"});
  ConvolutionDims c;
  c.input_batch = j.at("input_batch").as_int();
  c.input_feature = j.at("input_feature").as_int();
  c.input_spatial = j.at("input_spatial").as_int_list();
  c.kernel_input_feature = j.at("kernel_input_feature").as_int();
  c.kernel_output_feature = j.at("kernel_output_feature").as_int();
  c.kernel_spatial = j.at("kernel_spatial").as_int_list();
  c.output_batch = j.at("output_batch").as_int();
  c.output_feature = j.at("output_feature").as_int();
  c.output_spatial = j.at("output_spatial").as_int_list();
  return c;
}

nlohmann::ordered_json dot_to_json(const DotDims& d) {
  nlohmann::ordered_json j;
  j["lhs_contracting"] = d.lhs_contracting;
  j["rhs_contracting"] = d.rhs_contracting;
  if (!d.lhs_batch.empty()) j["lhs_batch"] = d.lhs_batch;
  if (!d.rhs_batch.empty()) j["rhs_batch"] = d.rhs_batch;
  return j;
}

DotDims dot_from_json(const JsonView& j) {
  j.expect_keys({"lhs_contracting", "rhs_contracting", "lhs_batch", "rhs_batch"});
  DotDims d;
  d.lhs_contracting = j.at("lhs_contracting").as_int_list();
  d.rhs_contracting = j.at("rhs_contracting").as_int_list();
  if (auto m = j.find("lhs_batch")) d.lhs_batch = m->as_int_list();
  if (auto m = j.find("rhs_batch")) d.rhs_batch = m->as_int_list();
  return d;
}

// A reduction body ("to_apply") written by name: the binary opcode of a computation
// {p0, p1, op(p0, p1)}, as XLA's reduce / reduce-window / scatter call it. Empty when the
// callee is anything else (it is then not written, as before).
std::string binary_callee_opcode(const Op& op) {
  if (op.called.size() != 1 || !op.called[0]) return "";
  const Program& callee = *op.called[0];
  if (callee.size() != 3) return "";
  const Op& root = callee.op(callee.root());
  return callee.operands(callee.root()).size() == 2 ? root.opcode : "";
}

std::shared_ptr<const Program> binary_callee(const std::string& opcode, ElementType type) {
  auto callee = std::make_shared<Program>(opcode + "_computation");
  Op lhs{.name = "lhs", .opcode = "parameter", .shape = make_shape(type, {}), .parameter_number = 0};
  Op rhs{.name = "rhs", .opcode = "parameter", .shape = make_shape(type, {}), .parameter_number = 1};
  const OpId a = callee->add_op(std::move(lhs));
  const OpId b = callee->add_op(std::move(rhs));
  callee->set_root(callee->add_op(Op{.name = opcode, .opcode = opcode, .shape = make_shape(type, {})}, {a, b}));
  return callee;
}

}  // namespace

nlohmann::ordered_json program_to_json(const Program& program) {
  nlohmann::ordered_json ops = nlohmann::ordered_json::array();
  for (OpId id = 0; id < program.size(); ++id) {
    const Op& op = program.op(id);
    nlohmann::ordered_json j;
    j["name"] = op.name;
    j["opcode"] = op.opcode;
    j["type"] = std::string(element_type_name(op.shape.element_type));
    j["shape"] = op.shape.dims;
    if (!op.shape.minor_to_major.empty()) j["layout"] = op.shape.minor_to_major;
    const auto operands = program.operands(id);
    if (!operands.empty()) {
      nlohmann::ordered_json names = nlohmann::ordered_json::array();
      for (OpId operand : operands) names.push_back(program.op(operand).name);
      j["operands"] = names;
    }
    if (!op.dimensions.empty()) j["dimensions"] = op.dimensions;
    if (op.window) j["window"] = window_to_json(*op.window);
    if (op.convolution) j["convolution"] = convolution_to_json(*op.convolution);
    if (op.dot) j["dot"] = dot_to_json(*op.dot);
    if (op.parameter_number >= 0) j["parameter_number"] = op.parameter_number;
    if (!op.fusion_kind.empty()) j["fusion_kind"] = op.fusion_kind;
    if (const std::string reducer = binary_callee_opcode(op); !reducer.empty()) j["to_apply"] = reducer;
    ops.push_back(std::move(j));
  }
  nlohmann::ordered_json result;
  result["format"] = "perftune-program";
  result["version"] = kProgramFormatVersion;
  result["name"] = program.name();
  if (!program.empty()) result["root"] = program.op(program.root()).name;
  result["ops"] = std::move(ops);
  return result;
}

Program program_from_json(const JsonView& json) {
  json.expect_keys({"format", "version", "name", "root", "ops", "description"});
  if (json.get_string("format", "perftune-program") != "perftune-program")
    json.at("format").fail("\"perftune-program\"");
  if (const auto version = json.find("version"); version && version->as_int() != kProgramFormatVersion)
    version->fail("version " + std::to_string(kProgramFormatVersion) + " of the program format");
  Program program(json.get_string("name", "program"));
  const JsonView ops = json.at("ops");
  if (ops.size() == 0) ops.fail("at least one op");

  std::map<std::string, OpId> ids;
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const JsonView j = ops.at(i);
    j.expect_keys({"name", "opcode", "type", "shape", "layout", "operands", "dimensions", "window",
                   "convolution", "dot", "parameter_number", "fusion_kind", "to_apply"});
    Op op;
    op.name = j.at("name").as_string();
    if (op.name.empty()) j.at("name").fail("a non-empty op name");
    op.opcode = j.at("opcode").as_string();
    if (op.opcode.empty()) j.at("opcode").fail("a non-empty opcode");
    const std::string type = j.get_string("type", "f32");
    const auto element_type = parse_element_type(type);
    if (!element_type) j.at("type").fail("an element type such as f32, bf16, s32 or pred");
    op.shape.element_type = *element_type;
    op.shape.dims = j.at("shape").as_int_list();
    for (std::size_t d = 0; d < op.shape.dims.size(); ++d)
      if (op.shape.dims[d] < 0) j.at("shape").at(d).fail("a non-negative dimension");
    if (auto layout = j.find("layout")) {
      op.shape.minor_to_major = layout->as_int_list();
      if (op.shape.minor_to_major.size() != op.shape.dims.size())
        layout->fail("one entry per dimension (" + std::to_string(op.shape.dims.size()) + ")");
    }
    if (auto m = j.find("dimensions")) op.dimensions = m->as_int_list();
    if (auto m = j.find("window")) op.window = window_from_json(*m);
    if (auto m = j.find("convolution")) op.convolution = convolution_from_json(*m);
    if (auto m = j.find("dot")) op.dot = dot_from_json(*m);
    if (auto m = j.find("parameter_number")) op.parameter_number = m->as_int();
    op.fusion_kind = j.get_string("fusion_kind", "");
    if (auto m = j.find("to_apply")) {
      const std::string reducer = m->as_string();
      if (reducer.empty()) m->fail("the opcode of a binary reduction body, e.g. \"add\" or \"maximum\"");
      op.called.push_back(binary_callee(reducer, op.shape.element_type));
    }
    if (!ids.emplace(op.name, program.size()).second) j.at("name").fail("a name not used by an earlier op");
    program.add_op(std::move(op));
  }
  // Operands may refer forward, so edges are added once every op exists; a cycle is then caught.
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const auto operands = ops.at(i).find("operands");
    if (!operands) continue;
    for (std::size_t k = 0; k < operands->size(); ++k) {
      const JsonView operand = operands->at(k);
      const auto it = ids.find(operand.as_string());
      if (it == ids.end()) operand.fail("the name of an op in this program");
      program.add_operand(i, it->second);
    }
  }
  if (auto root = json.find("root")) {
    const auto it = ids.find(root->as_string());
    if (it == ids.end()) root->fail("the name of an op in this program");
    program.set_root(it->second);
  }
  program.check_acyclic(json.file());
  return program;
}

Program load_program_file(const std::string& path) {
  const nlohmann::json json = parse_json_file(path);
  return program_from_json(JsonView(json, path));
}

void save_program_file(const Program& program, const std::string& path) {
  std::ofstream out(path);
  if (!out) throw std::runtime_error("cannot write program file " + path);
  out << program_to_json(program).dump(2) << "\n";
}

}  // namespace perftune
