#pragma once
// What an ONNX op's translation sees of the import: its node's inputs (known at import, or values
// of the program being built), attributes and outputs, and the builder that emits IR ops. One
// translation per op type (frontend/ops_*.cpp); frontend/onnx_import.cpp implements the context.
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "frontend/onnx_tensor.h"
#include "frontend/program_builder.h"

namespace onnx {
class NodeProto;
class AttributeProto;
}  // namespace onnx

namespace perftune::frontend {

class NodeContext {
 public:
  virtual ~NodeContext() = default;

  virtual const onnx::NodeProto& node() const = 0;
  virtual std::int64_t opset() const = 0;
  virtual ProgramBuilder& builder() = 0;

  // Inputs: an optional input that is absent (or named "") is not present.
  virtual std::size_t input_count() const = 0;
  virtual bool present(std::size_t i) const = 0;
  virtual bool known(std::size_t i) const = 0;
  // The value known at import; fails (naming the input) when it is computed at run time.
  virtual const KnownTensor& constant(std::size_t i) const = 0;
  // A float value of the program (a known one becomes a constant, or a weight parameter).
  virtual OpId value(std::size_t i) = 0;
  // The same reshaped to `dims` (same element count): a known input is made in that shape at
  // once (a bias as [C, 1, 1]), so no kernel spends a launch reshaping a weight.
  virtual OpId value_as(std::size_t i, const Dims& dims) = 0;
  virtual Dims dims(std::size_t i) const = 0;

  // Attributes (the default when absent); a present attribute of the wrong type fails.
  virtual bool has_attribute(const std::string& name) const = 0;
  virtual std::int64_t attribute_int(const std::string& name, std::int64_t fallback) const = 0;
  virtual float attribute_float(const std::string& name, float fallback) const = 0;
  virtual std::string attribute_string(const std::string& name, const std::string& fallback) const = 0;
  virtual std::vector<std::int64_t> attribute_ints(const std::string& name, const std::vector<std::int64_t>& fallback) const = 0;
  virtual std::vector<float> attribute_floats(const std::string& name) const = 0;
  virtual std::optional<KnownTensor> attribute_tensor(const std::string& name) const = 0;
  // Fails naming the first attribute of the node outside `allowed`.
  virtual void expect_attributes(const std::vector<std::string>& allowed) const = 0;

  virtual std::size_t output_count() const = 0;
  // Whether output `i` exists and is read (by a later node or as a graph output).
  virtual bool output_used(std::size_t i) const = 0;
  virtual void set_output(std::size_t i, OpId value) = 0;
  virtual void set_known_output(std::size_t i, KnownTensor value) = 0;

  // A name for the IR ops made for this node (its first output's name, plus `suffix`).
  virtual std::string hint(const std::string& suffix = "") const = 0;
  // An InputError naming the file and the node: "expected <expected>".
  [[noreturn]] virtual void fail(const std::string& expected) const = 0;

  // Conveniences over the above.
  std::int64_t axis(std::int64_t axis, std::size_t rank) const;  // a negative axis counts from the end
  void only_first_output() const;                              // fails when another output is read
};

using Translation = std::function<void(NodeContext&)>;
using TranslationTable = std::map<std::string, Translation>;

// Each family of ops adds its translations (frontend/ops_*.cpp).
void add_linear_ops(TranslationTable& table);
void add_elementwise_ops(TranslationTable& table);
void add_normalization_ops(TranslationTable& table);
void add_pooling_ops(TranslationTable& table);
void add_shape_ops(TranslationTable& table);

const TranslationTable& translations();

}  // namespace perftune::frontend
