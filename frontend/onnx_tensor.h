#pragma once
// A tensor whose values the ONNX frontend knows at import: an initializer, a Constant node, a
// shape, or what constant folding made of them. Values are held as doubles, which carry every
// float and every integer a shape or an index holds (up to 2^53) exactly.
#include <cstdint>
#include <string>
#include <vector>

#include "frontend/program_builder.h"

namespace onnx {
class TensorProto;
}

namespace perftune::frontend {

enum class ValueKind { kFloat, kInt, kBool };

struct KnownTensor {
  Dims dims;
  std::vector<double> values;  // row-major
  ValueKind kind = ValueKind::kFloat;

  std::int64_t count() const { return static_cast<std::int64_t>(values.size()); }
  std::vector<std::int64_t> ints() const;  // values rounded toward zero, clamped to int64
  std::vector<float> floats() const;
};

// The tensor a TensorProto holds (float, double, float16 as float; int8-64 and uint8-32 as int;
// bool). `file` and `place` name it in an InputError for an unsupported type, external data, or
// data that does not fill the declared shape.
KnownTensor tensor_from_proto(const onnx::TensorProto& proto, const std::string& file, const std::string& place);

// A serialized TensorProto file, as ONNX's test data sets hold (input_0.pb, output_0.pb), read
// as every input is (ir/file_io.h: a regular file within the input limit).
KnownTensor load_tensor_file(const std::string& path);
// Writes one, for tests and for scripts that check a network against another framework.
void save_tensor_file(const KnownTensor& tensor, const std::string& path, const std::string& name = "");

}  // namespace perftune::frontend
