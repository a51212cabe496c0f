#include "frontend/onnx_import.h"

#include <onnx/checker.h>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>

#include <algorithm>
#include <filesystem>
#include <optional>
#include <set>
#include <stdexcept>

#include "frontend/constant_folding.h"
#include "frontend/node_context.h"
#include "ir/file_io.h"
#include "ir/input_error.h"

namespace perftune::frontend {

namespace {

// The opsets whose op definitions ONNX 1.12 (Debian's libonnx) ships. Where an op's older
// versions differ, its translation checks the opset or rejects the attribute that differs.
constexpr std::int64_t kMinOpset = 1, kMaxOpset = 17;

std::string dims_text(const Dims& dims) {
  std::string out;
  for (std::size_t i = 0; i < dims.size(); ++i) out += (i ? "x" : "") + std::to_string(dims[i]);
  return out.empty() ? "(scalar)" : out;
}

// A tensor of the graph: computed by the program, or known at import.
struct Entry {
  std::optional<OpId> op;
  std::optional<KnownTensor> known;
  bool initializer = false;
};

// Initializers are the model's weights, and so is any large tensor folded at import; scalars and
// small tensors the graph computes stay constants, copied into the kernels that read them.
constexpr std::int64_t kMaxConstantElements = 4096;
bool is_weight(const Entry& e) { return (e.initializer && e.known->count() > 1) || e.known->count() > kMaxConstantElements; }

class Importer;

class Context final : public NodeContext {
 public:
  Context(Importer& importer, const onnx::NodeProto& node) : importer_(importer), node_(node) {}

  const onnx::NodeProto& node() const override { return node_; }
  std::int64_t opset() const override;
  ProgramBuilder& builder() override;
  std::size_t input_count() const override { return static_cast<std::size_t>(node_.input_size()); }
  bool present(std::size_t i) const override { return i < input_count() && !node_.input(static_cast<int>(i)).empty(); }
  bool known(std::size_t i) const override;
  const KnownTensor& constant(std::size_t i) const override;
  OpId value(std::size_t i) override;
  OpId value_as(std::size_t i, const Dims& dims) override;
  Dims dims(std::size_t i) const override;

  bool has_attribute(const std::string& name) const override { return find(name) != nullptr; }
  std::int64_t attribute_int(const std::string& name, std::int64_t fallback) const override;
  float attribute_float(const std::string& name, float fallback) const override;
  std::string attribute_string(const std::string& name, const std::string& fallback) const override;
  std::vector<std::int64_t> attribute_ints(const std::string& name, const std::vector<std::int64_t>& fallback) const override;
  std::vector<float> attribute_floats(const std::string& name) const override;
  std::optional<KnownTensor> attribute_tensor(const std::string& name) const override;
  void expect_attributes(const std::vector<std::string>& allowed) const override;

  std::size_t output_count() const override { return static_cast<std::size_t>(node_.output_size()); }
  bool output_used(std::size_t i) const override;
  void set_output(std::size_t i, OpId value) override;
  void set_known_output(std::size_t i, KnownTensor value) override;
  std::string hint(const std::string& suffix) const override;
  [[noreturn]] void fail(const std::string& expected) const override;

  std::string place() const;

 private:
  const Entry& entry(std::size_t i) const;
  const onnx::AttributeProto* find(const std::string& name) const;
  const onnx::AttributeProto& typed(const std::string& name, int type) const;

  Importer& importer_;
  const onnx::NodeProto& node_;
};

class Importer {
 public:
  Importer(onnx::ModelProto model, std::string file, const OnnxImportOptions& options)
      : model_(std::move(model)), file_(std::move(file)), options_(options), builder_(program_name()) {}

  ImportedNetwork run() {
    read_opset();
    fix_input_shapes();
    // Before ONNX's own checks: its shape inference of some ops the frontend does not take crashes
    // on malformed attributes (ConvTranspose's, found by fuzz_onnx), and an unknown op's error
    // should name the op rather than what shape inference made of it.
    for (const onnx::NodeProto& node : model_.graph().node()) expect_supported(node);
    check_and_infer();
    const onnx::GraphProto& graph = model_.graph();
    for (int i = 0; i < graph.initializer_size(); ++i) {
      const onnx::TensorProto& t = graph.initializer(i);
      Entry e;
      e.known = tensor_from_proto(t, file_, "initializer '" + t.name() + "'");
      e.initializer = true;
      entries_[t.name()] = std::move(e);
    }
    for (const onnx::SparseTensorProto& s : graph.sparse_initializer())
      throw InputError(file_, "initializer '" + s.values().name() + "'", "dense initializers (sparse ones are not supported)");
    add_inputs();
    count_uses();
    for (const onnx::NodeProto& node : graph.node()) translate(node);
    return finish();
  }

  const std::string& file() const { return file_; }

 private:
  onnx::ModelProto model_;

 public:
  // State the node contexts read and write.
  std::string file_;
  const OnnxImportOptions& options_;
  std::map<std::string, Entry> entries_;
  std::map<std::string, std::int64_t> uses_;
  std::map<std::string, Dims> inferred_;
  std::int64_t opset_ = 0;
  ProgramBuilder builder_;

 private:
  std::string program_name() const {
    if (!options_.name.empty()) return options_.name;
    if (!model_.graph().name().empty()) return model_.graph().name();
    return std::filesystem::path(file_).stem().string();
  }

  void read_opset() {
    for (const onnx::OperatorSetIdProto& o : model_.opset_import())
      if (o.domain().empty() || o.domain() == "ai.onnx") opset_ = o.version();
    if (opset_ == 0) throw InputError(file_, "opset_import", "an opset of the default ONNX domain");
    if (opset_ < kMinOpset || opset_ > kMaxOpset)
      throw InputError(file_, "opset_import", "opset " + std::to_string(kMinOpset) + " to " + std::to_string(kMaxOpset) + " (ONNX 1.12), found " +
                                                  std::to_string(opset_) + "; re-export with an opset in that range");
    if (!model_.has_graph()) throw InputError(file_, "graph", "a model with a graph");
  }

  std::set<std::string> initializer_names() const {
    std::set<std::string> names;
    for (const onnx::TensorProto& t : model_.graph().initializer()) names.insert(t.name());
    return names;
  }

  // Every graph input that stays an input gets static dimensions: from --input, else as declared.
  void fix_input_shapes() {
    const auto initializers = initializer_names();
    std::set<std::string> seen;
    onnx::GraphProto* graph = model_.mutable_graph();
    for (int i = 0; i < graph->input_size(); ++i) {
      onnx::ValueInfoProto* input = graph->mutable_input(i);
      const std::string& name = input->name();
      seen.insert(name);
      if (initializers.count(name) || options_.known_inputs.count(name)) continue;
      const std::string place = "input '" + name + "'";
      if (!input->type().has_tensor_type()) throw InputError(file_, place, "a tensor input");
      const auto& tensor = input->type().tensor_type();
      if (tensor.elem_type() != onnx::TensorProto_DataType_FLOAT)
        throw InputError(file_, place, "a float32 input (perftune computes in f32; this one has ONNX data type " + std::to_string(tensor.elem_type()) + ")");
      onnx::TensorShapeProto* shape = input->mutable_type()->mutable_tensor_type()->mutable_shape();
      if (const auto it = options_.input_shapes.find(name); it != options_.input_shapes.end()) {
        if (tensor.has_shape() && tensor.shape().dim_size() != static_cast<int>(it->second.size()))
          throw InputError(file_, place, "a shape of rank " + std::to_string(tensor.shape().dim_size()) + " in --input " + name + "=..., found " + dims_text(it->second));
        shape->clear_dim();
        for (std::int64_t d : it->second) shape->add_dim()->set_dim_value(d);
        continue;
      }
      if (!tensor.has_shape()) throw InputError(file_, place, "a declared shape; give one with --input " + name + "=DIMS, e.g. 1x3x224x224");
      for (int d = 0; d < shape->dim_size(); ++d) {
        const auto& dim = shape->dim(d);
        if (dim.has_dim_value() && dim.dim_value() == 0)
          throw InputError(file_, place, "non-empty dimensions (dimension " + std::to_string(d) + " is 0: perftune has no empty tensors)");
        if (!dim.has_dim_value() || dim.dim_value() < 0) {
          std::string example;
          for (int k = 0; k < shape->dim_size(); ++k)
            example += (k ? "x" : "") + (shape->dim(k).has_dim_value() && shape->dim(k).dim_value() > 0 ? std::to_string(shape->dim(k).dim_value()) : "1");
          throw InputError(file_, place,
                           "static dimensions; dimension " + std::to_string(d) + (dim.has_dim_param() ? " ('" + dim.dim_param() + "')" : "") +
                               " is dynamic: fix it with --input " + name + "=" + example + " (or \"inputs\" in a campaign's source)");
        }
      }
    }
    for (const auto& [name, dims] : options_.input_shapes)
      if (!seen.count(name)) throw InputError(file_, "--input " + name, "the name of a graph input");
  }

  void check_and_infer() {
    try {
      onnx::checker::check_model(model_);
    } catch (const std::exception& error) {
      throw InputError(file_, "model", std::string("a valid ONNX model (onnx::checker: ") + first_line(error.what()) + ")");
    }
    onnx::ModelProto inferred = model_;
    try {
      onnx::shape_inference::InferShapes(inferred);
    } catch (const std::exception& error) {
      throw InputError(file_, "model", std::string("shapes ONNX can infer (") + first_line(error.what()) + ")");
    }
    const auto read = [&](const onnx::ValueInfoProto& v) {
      if (!v.type().has_tensor_type() || !v.type().tensor_type().has_shape()) return;
      Dims dims;
      for (const auto& d : v.type().tensor_type().shape().dim()) {
        if (!d.has_dim_value()) return;
        dims.push_back(d.dim_value());
      }
      inferred_[v.name()] = dims;
    };
    for (const auto& v : inferred.graph().value_info()) read(v);
    for (const auto& v : inferred.graph().output()) read(v);
  }

  static std::string first_line(const std::string& text) {
    const std::size_t end = text.find('\n');
    return end == std::string::npos ? text : text.substr(0, end);
  }

  void add_inputs() {
    for (const onnx::ValueInfoProto& input : model_.graph().input()) {
      const std::string& name = input.name();
      if (entries_.count(name)) continue;  // an initializer also listed as an input (IR version < 4)
      Entry e;
      if (const auto it = options_.known_inputs.find(name); it != options_.known_inputs.end()) {
        e.known = it->second;
      } else {
        Dims dims;
        for (const auto& d : input.type().tensor_type().shape().dim()) dims.push_back(d.dim_value());
        try {
          e.op = builder_.parameter(name, dims, false);
        } catch (const std::invalid_argument& error) {
          throw InputError(file_, "input '" + name + "'", error.what());
        }
        result_.input_names.push_back(name);
        result_.inputs.push_back(*e.op);
      }
      entries_[name] = std::move(e);
    }
  }

  void count_uses() {
    for (const onnx::NodeProto& node : model_.graph().node())
      for (const std::string& input : node.input())
        if (!input.empty()) ++uses_[input];
    for (const onnx::ValueInfoProto& output : model_.graph().output()) ++uses_[output.name()];
  }

  void expect_supported(const onnx::NodeProto& node) {
    Context context(*this, node);
    if (!node.domain().empty() && node.domain() != "ai.onnx")
      context.fail("an op of the default ONNX domain (domain '" + node.domain() + "' is not supported)");
    if (!translations().count(node.op_type()) && !folders().count(node.op_type()))
      context.fail("an op the frontend translates ('" + node.op_type() + "' is not supported; frontend/README.md lists those that are)");
    // ONNX's convolution and pooling shape inference divides by these (fuzz_onnx: a stride of 0).
    for (const char* name : {"strides", "dilations", "kernel_shape"})
      for (std::int64_t v : context.attribute_ints(name, {}))
        if (v < 1) context.fail("'" + std::string(name) + "' of 1 or more, found " + std::to_string(v));
  }

  void translate(const onnx::NodeProto& node) {
    Context context(*this, node);
    ++result_.onnx_nodes;
    ++result_.op_types[node.op_type()];
    for (int i = 0; i < node.input_size(); ++i)
      if (!node.input(i).empty() && !entries_.count(node.input(i)))
        context.fail("input '" + node.input(i) + "' to be made by an earlier node, a graph input or an initializer (a dangling name, or a cycle)");
    for (const std::string& output : node.output())
      if (!output.empty() && entries_.count(output)) context.fail("output '" + output + "' to be a new name (it is already defined)");
    try {
      if (try_fold(context, folders())) {
        ++result_.folded_nodes;
      } else {
        const auto& table = translations();
        const auto it = table.find(node.op_type());
        if (it == table.end())
          context.fail("an op the frontend translates ('" + node.op_type() + "' is not supported; frontend/README.md lists those that are)");
        it->second(context);
      }
    } catch (const std::invalid_argument& error) {
      context.fail(error.what());  // from the program builder: shapes or attributes it cannot take
    }
    for (std::size_t i = 0; i < context.output_count(); ++i)
      if (context.output_used(i) && !entries_.count(node.output(static_cast<int>(i))))
        context.fail("output " + std::to_string(i) + " ('" + node.output(static_cast<int>(i)) + "') to be computed (the frontend makes only the op's first output)");
  }

  ImportedNetwork finish() {
    std::set<OpId> taken;
    for (const onnx::ValueInfoProto& output : model_.graph().output()) {
      const std::string& name = output.name();
      const auto it = entries_.find(name);
      if (it == entries_.end()) throw InputError(file_, "output '" + name + "'", "an output made by a node, an input or an initializer");
      Entry& e = it->second;
      OpId id;
      try {
        if (!e.op) {
          auto values = std::make_shared<Literal>(e.known->floats());
          e.op = is_weight(e) ? builder_.parameter(name, e.known->dims, true, values) : builder_.constant(name, e.known->dims, values);
        }
        id = *e.op;
        // A graph output is a value of its own, computed and without users, so that a kernel
        // writes it: an input, a constant, an op read further on or a second output gets a copy.
        const Op& op = builder_.program().op(id);
        if (op.is_leaf_value() || !builder_.program().users(id).empty() || taken.count(id)) id = builder_.elementwise(name, "copy", {id});
      } catch (const std::invalid_argument& error) {
        throw InputError(file_, "output '" + name + "'", error.what());
      }
      taken.insert(id);
      result_.output_names.push_back(name);
      result_.outputs.push_back(id);
    }
    if (result_.outputs.empty()) throw InputError(file_, "graph", "at least one output");
    builder_.program().set_root(result_.outputs.front());
    for (OpId id = 0; id < builder_.program().size(); ++id) result_.weight_parameters += builder_.program().op(id).weight ? 1 : 0;
    result_.opset = opset_;
    result_.program = std::move(builder_.program());
    return std::move(result_);
  }

  ImportedNetwork result_;
};

// ---- Context ----

std::int64_t Context::opset() const { return importer_.opset_; }
ProgramBuilder& Context::builder() { return importer_.builder_; }

std::string Context::place() const {
  return "node '" + (node_.name().empty() ? (node_.output_size() ? node_.output(0) : std::string("?")) : node_.name()) + "' (" + node_.op_type() +
         ", opset " + std::to_string(importer_.opset_) + ")";
}

void Context::fail(const std::string& expected) const { throw InputError(importer_.file(), place(), expected); }

const Entry& Context::entry(std::size_t i) const {
  if (!present(i)) fail("input " + std::to_string(i) + " to be given");
  return importer_.entries_.at(node_.input(static_cast<int>(i)));
}

bool Context::known(std::size_t i) const { return present(i) && entry(i).known.has_value(); }

const KnownTensor& Context::constant(std::size_t i) const {
  const Entry& e = entry(i);
  if (!e.known) fail("input " + std::to_string(i) + " ('" + node_.input(static_cast<int>(i)) + "') to be known at import (a constant or initializer)");
  return *e.known;
}

OpId Context::value(std::size_t i) {
  (void)entry(i);  // fails for an absent input
  Entry& e = importer_.entries_.at(node_.input(static_cast<int>(i)));
  if (e.op) return *e.op;
  const KnownTensor& k = *e.known;
  auto values = std::make_shared<Literal>(k.floats());
  const std::string& name = node_.input(static_cast<int>(i));
  e.op = is_weight(e) ? builder().parameter(name, k.dims, true, std::move(values)) : builder().constant(name, k.dims, std::move(values));
  return *e.op;
}

OpId Context::value_as(std::size_t i, const Dims& dims) {
  const Entry& e = entry(i);
  if (e.op || element_count(dims) != e.known->count()) return builder().reshape(hint(".in" + std::to_string(i)), value(i), dims);
  auto values = std::make_shared<Literal>(e.known->floats());
  const std::string& name = node_.input(static_cast<int>(i));
  return is_weight(e) ? builder().parameter(name, dims, true, std::move(values)) : builder().constant(name, dims, std::move(values));
}

Dims Context::dims(std::size_t i) const {
  const Entry& e = entry(i);
  return e.op ? importer_.builder_.dims(*e.op) : e.known->dims;
}

const onnx::AttributeProto* Context::find(const std::string& name) const {
  for (const onnx::AttributeProto& a : node_.attribute())
    if (a.name() == name) return &a;
  return nullptr;
}

const onnx::AttributeProto& Context::typed(const std::string& name, int type) const {
  const onnx::AttributeProto* a = find(name);
  if (a->type() != type && a->type() != onnx::AttributeProto_AttributeType_UNDEFINED)
    fail("attribute '" + name + "' of type " + std::to_string(type) + ", found type " + std::to_string(a->type()));
  return *a;
}

std::int64_t Context::attribute_int(const std::string& name, std::int64_t fallback) const {
  return has_attribute(name) ? typed(name, onnx::AttributeProto_AttributeType_INT).i() : fallback;
}

float Context::attribute_float(const std::string& name, float fallback) const {
  return has_attribute(name) ? typed(name, onnx::AttributeProto_AttributeType_FLOAT).f() : fallback;
}

std::string Context::attribute_string(const std::string& name, const std::string& fallback) const {
  return has_attribute(name) ? typed(name, onnx::AttributeProto_AttributeType_STRING).s() : fallback;
}

std::vector<std::int64_t> Context::attribute_ints(const std::string& name, const std::vector<std::int64_t>& fallback) const {
  if (!has_attribute(name)) return fallback;
  const auto& a = typed(name, onnx::AttributeProto_AttributeType_INTS);
  return {a.ints().begin(), a.ints().end()};
}

std::vector<float> Context::attribute_floats(const std::string& name) const {
  if (!has_attribute(name)) return {};
  const auto& a = typed(name, onnx::AttributeProto_AttributeType_FLOATS);
  return {a.floats().begin(), a.floats().end()};
}

std::optional<KnownTensor> Context::attribute_tensor(const std::string& name) const {
  if (!has_attribute(name)) return std::nullopt;
  return tensor_from_proto(typed(name, onnx::AttributeProto_AttributeType_TENSOR).t(), importer_.file(), place() + " attribute '" + name + "'");
}

void Context::expect_attributes(const std::vector<std::string>& allowed) const {
  for (const onnx::AttributeProto& a : node_.attribute())
    if (std::find(allowed.begin(), allowed.end(), a.name()) == allowed.end())
      fail("no attribute '" + a.name() + "' (not supported for " + node_.op_type() + ")");
}

bool Context::output_used(std::size_t i) const {
  if (i >= output_count() || node_.output(static_cast<int>(i)).empty()) return false;
  const auto it = importer_.uses_.find(node_.output(static_cast<int>(i)));
  return it != importer_.uses_.end() && it->second > 0;
}

void Context::set_output(std::size_t i, OpId value) {
  if (i >= output_count() || node_.output(static_cast<int>(i)).empty()) return;
  const std::string& name = node_.output(static_cast<int>(i));
  const Dims& ours = importer_.builder_.dims(value);
  if (const auto it = importer_.inferred_.find(name); it != importer_.inferred_.end() && it->second != ours)
    fail("the shape ONNX infers for '" + name + "', " + dims_text(it->second) + " (the frontend made " + dims_text(ours) + ": a frontend bug)");
  Entry e;
  e.op = value;
  importer_.entries_[name] = std::move(e);
}

void Context::set_known_output(std::size_t i, KnownTensor value) {
  if (i >= output_count() || node_.output(static_cast<int>(i)).empty()) return;
  Entry e;
  e.known = std::move(value);
  importer_.entries_[node_.output(static_cast<int>(i))] = std::move(e);
}

std::string Context::hint(const std::string& suffix) const {
  const std::string base = node_.output_size() && !node_.output(0).empty() ? node_.output(0) : node_.name();
  return base + suffix;
}

}  // namespace

std::int64_t NodeContext::axis(std::int64_t axis, std::size_t rank) const {
  const auto r = static_cast<std::int64_t>(rank);
  if (r == 0) fail("an input of rank 1 or more (an axis of a scalar)");  // found by fuzz_onnx: Split of a scalar
  if (axis < -r || axis >= r) fail("an axis in [" + std::to_string(-r) + ", " + std::to_string(r) + "), found " + std::to_string(axis));
  return axis < 0 ? axis + r : axis;
}

void NodeContext::only_first_output() const {
  for (std::size_t i = 1; i < output_count(); ++i)
    if (output_used(i)) fail("only the first output to be read (output " + std::to_string(i) + " is not supported)");
}

ImportedNetwork import_onnx_bytes(const std::string& bytes, const std::string& file, const OnnxImportOptions& options) {
  onnx::ModelProto model;
  if (!model.ParseFromString(bytes)) throw InputError(file, "byte 0", "a serialized ONNX ModelProto (the file is truncated or not ONNX)");
  return Importer(std::move(model), file, options).run();
}

ImportedNetwork import_onnx(const std::string& path, const OnnxImportOptions& options) {
  return import_onnx_bytes(read_file(path), path, options);
}

Dims parse_dims(const std::string& text, const std::string& what) {
  Dims dims;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t end = std::min(text.find('x', start), text.size());
    const std::string part = text.substr(start, end - start);
    std::size_t used = 0;
    long long value = -1;
    try {
      value = std::stoll(part, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (part.empty() || used != part.size() || value < 1 || dimension_problem(value))
      throw InputError(what, text, "dimensions as positive integers joined by 'x', e.g. 1x3x224x224");
    dims.push_back(value);
    start = end + 1;
  }
  return dims;
}

std::vector<std::string> supported_onnx_ops() {
  std::set<std::string> names;
  for (const auto& [name, translation] : translations()) names.insert(name);
  for (const auto& [name, fold] : folders()) names.insert(name);
  return {names.begin(), names.end()};
}

const TranslationTable& translations() {
  static const TranslationTable table = [] {
    TranslationTable t;
    add_linear_ops(t);
    add_elementwise_ops(t);
    add_normalization_ops(t);
    add_pooling_ops(t);
    add_shape_ops(t);
    return t;
  }();
  return table;
}

}  // namespace perftune::frontend
