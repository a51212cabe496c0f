#include "ir/program_json.h"

#include <cmath>
#include <fstream>
#include <limits>
#include <map>
#include <memory>
#include <set>

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

nlohmann::ordered_json convolution_json(const ConvolutionDims& c) {
  nlohmann::ordered_json j = convolution_to_json(c);
  if (c.feature_group_count != 1) j["feature_group_count"] = c.feature_group_count;
  return j;
}

ConvolutionDims convolution_from_json(const JsonView& j) {
  j.expect_keys({"input_batch", "input_feature", "input_spatial", "kernel_input_feature",
                 "kernel_output_feature", "kernel_spatial", "output_batch", "output_feature",
                 "output_spatial", "feature_group_count"});
  ConvolutionDims c;
  if (auto m = j.find("feature_group_count")) c.feature_group_count = m->as_positive_int();
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

SliceDims slice_from_json(const JsonView& j, std::size_t rank) {
  j.expect_keys({"start", "stride"});
  SliceDims s{j.at("start").as_int_list(), j.at("stride").as_int_list()};
  if (s.start.size() != rank) j.at("start").fail("one start per output dimension");
  if (s.stride.size() != rank) j.at("stride").fail("one stride per output dimension");
  for (std::int64_t stride : s.stride)
    if (stride == 0) j.at("stride").fail("non-zero strides");
  return s;
}

PadDims padding_from_json(const JsonView& j, std::size_t rank) {
  j.expect_keys({"low", "high"});
  PadDims p{j.at("low").as_int_list(), j.at("high").as_int_list()};
  for (const char* key : {"low", "high"}) {
    const auto& values = std::string(key) == "low" ? p.low : p.high;
    if (values.size() != rank) j.at(key).fail("one entry per dimension");
    for (std::int64_t v : values)
      if (v < 0) j.at(key).fail("non-negative padding");
  }
  return p;
}

std::shared_ptr<const Literal> literal_from_json(const JsonView& j, std::int64_t count) {
  if (!j.is_array()) j.fail("a list of numbers");
  if (static_cast<std::int64_t>(j.size()) != count) j.fail(std::to_string(count) + " values (one per element of the shape)");
  auto values = std::make_shared<Literal>();
  values->reserve(j.size());
  for (std::size_t i = 0; i < j.size(); ++i) {
    const JsonView v = j.at(i);
    if (v.value().is_string()) {  // JSON has no infinities: literal_to_json writes them as strings
      const std::string text = v.as_string();
      if (text == "inf") values->push_back(std::numeric_limits<float>::infinity());
      else if (text == "-inf") values->push_back(-std::numeric_limits<float>::infinity());
      else if (text == "nan") values->push_back(std::numeric_limits<float>::quiet_NaN());
      else v.fail("a number, \"inf\", \"-inf\" or \"nan\"");
    } else {
      values->push_back(static_cast<float>(v.as_number()));
    }
  }
  return values;
}

nlohmann::ordered_json literal_to_json(const Literal& values) {
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (float v : values) {
    if (std::isnan(v)) list.push_back("nan");
    else if (std::isinf(v)) list.push_back(v > 0 ? "inf" : "-inf");
    else list.push_back(v);
  }
  return list;
}

nlohmann::ordered_json tuple_to_json(const std::vector<Shape>& elements) {
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const Shape& e : elements) {
    nlohmann::ordered_json j;
    j["type"] = std::string(element_type_name(e.element_type));
    j["shape"] = e.dims;
    if (!e.minor_to_major.empty()) j["layout"] = e.minor_to_major;
    if (!e.tuple_shapes.empty()) j["tuple"] = tuple_to_json(e.tuple_shapes);
    list.push_back(std::move(j));
  }
  return list;
}

ElementType element_type_from_json(const JsonView& j) {
  const std::string type = j.get_string("type", "f32");
  const auto element_type = parse_element_type(type);
  if (!element_type) j.at("type").fail("an element type such as f32, bf16, s32 or pred");
  return *element_type;
}

// Dims, layout and tuple elements of a shape object (an op or a tuple element). XLA nests tuples
// a few levels at most; `depth` bounds the recursion for crafted input.
void shape_fields_from_json(const JsonView& j, Shape& shape, int depth = 0) {
  constexpr int kMaxTupleDepth = 64;
  if (depth > kMaxTupleDepth) j.fail("tuples nested at most " + std::to_string(kMaxTupleDepth) + " deep");
  shape.dims = j.at("shape").as_int_list();
  for (std::size_t d = 0; d < shape.dims.size(); ++d)
    if (auto problem = dimension_problem(shape.dims[d])) j.at("shape").at(d).fail(*problem);
  if (auto problem = shape_problem(make_shape(ElementType::kF32, shape.dims))) j.at("shape").fail(*problem);
  if (auto layout = j.find("layout")) {
    shape.minor_to_major = layout->as_int_list();
    if (shape.minor_to_major.size() != shape.dims.size())
      layout->fail("one entry per dimension (" + std::to_string(shape.dims.size()) + ")");
  }
  if (auto tuple = j.find("tuple"))
    for (const JsonView& e : tuple->elements()) {
      e.expect_keys({"type", "shape", "layout", "tuple"});
      Shape element;
      element.element_type = element_type_from_json(e);
      shape_fields_from_json(e, element, depth + 1);
      shape.tuple_shapes.push_back(std::move(element));
    }
}

// Names every computation called (directly or not) from `program`, callees before callers, each
// distinct computation once; a name repeated by different computations gets a ".<n>" suffix.
void collect_called(const Program& program, std::map<const Program*, std::string>& names,
                    std::vector<const Program*>& order, std::map<std::string, int>& used) {
  for (OpId id = 0; id < program.size(); ++id)
    for (const auto& callee : program.op(id).called) {
      if (!callee || names.count(callee.get())) continue;
      names[callee.get()] = "";  // being visited: a recursive call is not followed again
      collect_called(*callee, names, order, used);
      std::string name = callee->name().empty() ? "computation" : callee->name();
      if (const int n = used[name]++; n > 0) name += "." + std::to_string(n);
      names[callee.get()] = name;
      order.push_back(callee.get());
    }
}

nlohmann::ordered_json ops_to_json(const Program& program, const std::map<const Program*, std::string>& names) {
  nlohmann::ordered_json ops = nlohmann::ordered_json::array();
  for (OpId id = 0; id < program.size(); ++id) {
    const Op& op = program.op(id);
    nlohmann::ordered_json j;
    j["name"] = op.name;
    j["opcode"] = op.opcode;
    j["type"] = std::string(element_type_name(op.shape.element_type));
    j["shape"] = op.shape.dims;
    if (!op.shape.minor_to_major.empty()) j["layout"] = op.shape.minor_to_major;
    if (!op.shape.tuple_shapes.empty()) j["tuple"] = tuple_to_json(op.shape.tuple_shapes);
    const auto operands = program.operands(id);
    if (!operands.empty()) {
      nlohmann::ordered_json list = nlohmann::ordered_json::array();
      for (OpId operand : operands) list.push_back(program.op(operand).name);
      j["operands"] = list;
    }
    if (!op.dimensions.empty()) j["dimensions"] = op.dimensions;
    if (op.window) j["window"] = window_to_json(*op.window);
    if (op.convolution) j["convolution"] = convolution_json(*op.convolution);
    if (op.dot) j["dot"] = dot_to_json(*op.dot);
    if (op.slice) j["slice"] = {{"start", op.slice->start}, {"stride", op.slice->stride}};
    if (op.padding) j["padding"] = {{"low", op.padding->low}, {"high", op.padding->high}};
    if (!op.indices.empty()) j["indices"] = op.indices;
    if (op.is_constant() && op.literal) j["value"] = literal_to_json(*op.literal);
    if (op.parameter_number >= 0) j["parameter_number"] = op.parameter_number;
    if (op.weight) j["weight"] = true;
    if (!op.fusion_kind.empty()) j["fusion_kind"] = op.fusion_kind;
    if (!op.called.empty()) {
      nlohmann::ordered_json list = nlohmann::ordered_json::array();
      for (const auto& callee : op.called) list.push_back(names.at(callee.get()));
      j["called"] = list;
    }
    ops.push_back(std::move(j));
  }
  return ops;
}

class ComputationResolver;
Program program_body_from_json(const JsonView& json, ComputationResolver& resolver);

// Builds called computations by name on first use, so each is built once and shared by its callers.
class ComputationResolver {
 public:
  explicit ComputationResolver(const JsonView& json) {
    if (auto list = json.find("computations"))
      for (const JsonView& c : list->elements()) {
        c.expect_keys({"name", "root", "ops"});
        if (!views_.emplace(c.at("name").as_string(), c).second) c.at("name").fail("a name not used by an earlier computation");
      }
  }

  std::shared_ptr<const Program> get(const JsonView& name_view) {
    const std::string name = name_view.as_string();
    if (auto it = built_.find(name); it != built_.end()) return it->second;
    const auto view = views_.find(name);
    if (view == views_.end()) name_view.fail("the name of a computation in $.computations");
    if (!building_.insert(name).second) name_view.fail("a call graph without recursion, but '" + name + "' calls itself");
    // Imported XLA programs nest calls a few levels deep; the limit keeps a crafted chain from
    // exhausting the stack.
    constexpr std::size_t kMaxCallDepth = 256;
    if (building_.size() > kMaxCallDepth) name_view.fail("calls nested at most " + std::to_string(kMaxCallDepth) + " deep");
    auto program = std::make_shared<const Program>(program_body_from_json(view->second, *this));
    building_.erase(name);
    built_[name] = program;
    return program;
  }

 private:
  std::map<std::string, JsonView> views_;
  std::map<std::string, std::shared_ptr<const Program>> built_;
  std::set<std::string> building_;
};

// The ops of a program or of one of its called computations.
Program program_body_from_json(const JsonView& json, ComputationResolver& resolver) {
  Program program(json.get_string("name", "program"));
  const JsonView ops = json.at("ops");
  if (ops.size() == 0) ops.fail("at least one op");

  std::map<std::string, OpId> ids;
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const JsonView j = ops.at(i);
    j.expect_keys({"name", "opcode", "type", "shape", "layout", "tuple", "operands", "dimensions", "window",
                   "convolution", "dot", "slice", "padding", "indices", "value", "parameter_number", "weight",
                   "fusion_kind", "called"});
    Op op;
    op.name = j.at("name").as_string();
    if (op.name.empty()) j.at("name").fail("a non-empty op name");
    op.opcode = j.at("opcode").as_string();
    if (op.opcode.empty()) j.at("opcode").fail("a non-empty opcode");
    op.shape.element_type = element_type_from_json(j);
    shape_fields_from_json(j, op.shape);
    if (auto called = j.find("called"))
      for (std::size_t k = 0; k < called->size(); ++k) op.called.push_back(resolver.get(called->at(k)));
    if (auto m = j.find("dimensions")) op.dimensions = m->as_int_list();
    if (auto m = j.find("window")) op.window = window_from_json(*m);
    if (auto m = j.find("convolution")) op.convolution = convolution_from_json(*m);
    if (auto m = j.find("dot")) op.dot = dot_from_json(*m);
    if (auto m = j.find("slice")) op.slice = slice_from_json(*m, op.shape.dims.size());
    if (auto m = j.find("padding")) op.padding = padding_from_json(*m, op.shape.dims.size());
    if (auto m = j.find("indices")) op.indices = m->as_int_list();
    if (auto m = j.find("value")) op.literal = literal_from_json(*m, op.shape.element_count());
    if (auto m = j.find("parameter_number")) op.parameter_number = m->as_int();
    op.weight = j.get_bool("weight", false);
    op.fusion_kind = j.get_string("fusion_kind", "");
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

}  // namespace

nlohmann::ordered_json program_to_json(const Program& program) {
  std::map<const Program*, std::string> names;
  std::vector<const Program*> order;
  std::map<std::string, int> used;
  collect_called(program, names, order, used);
  nlohmann::ordered_json result;
  result["format"] = "perftune-program";
  result["version"] = kProgramFormatVersion;
  result["name"] = program.name();
  if (!program.empty()) result["root"] = program.op(program.root()).name;
  result["ops"] = ops_to_json(program, names);
  if (!order.empty()) {
    nlohmann::ordered_json computations = nlohmann::ordered_json::array();
    for (const Program* callee : order) {
      nlohmann::ordered_json c;
      c["name"] = names.at(callee);
      if (!callee->empty()) c["root"] = callee->op(callee->root()).name;
      c["ops"] = ops_to_json(*callee, names);
      computations.push_back(std::move(c));
    }
    result["computations"] = std::move(computations);
  }
  return result;
}

Program program_from_json(const JsonView& json) {
  json.expect_keys({"format", "version", "name", "root", "ops", "description", "computations"});
  if (json.get_string("format", "perftune-program") != "perftune-program")
    json.at("format").fail("\"perftune-program\"");
  if (const auto version = json.find("version"); version && version->as_int() != kProgramFormatVersion)
    version->fail("version " + std::to_string(kProgramFormatVersion) + " of the program format");
  ComputationResolver resolver(json);
  return program_body_from_json(json, resolver);
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
