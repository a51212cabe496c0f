#include "frontend/onnx_tensor.h"

#include <onnx/onnx_pb.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "ir/file_io.h"
#include "ir/input_error.h"

namespace perftune::frontend {

namespace {

// IEEE half to float, for float16 initializers.
float half_to_float(std::uint16_t h) {
  const std::uint32_t sign = (h & 0x8000u) << 16, exponent = (h >> 10) & 0x1f, mantissa = h & 0x3ff;
  std::uint32_t bits;
  if (exponent == 0) {
    if (mantissa == 0) {
      bits = sign;
    } else {  // subnormal: renormalize
      int e = -1;
      std::uint32_t m = mantissa;
      do {
        ++e;
        m <<= 1;
      } while ((m & 0x400u) == 0);
      bits = sign | static_cast<std::uint32_t>(127 - 15 - e) << 23 | (m & 0x3ffu) << 13;
    }
  } else if (exponent == 31) {
    bits = sign | 0x7f800000u | mantissa << 13;
  } else {
    bits = sign | (exponent + 127 - 15) << 23 | mantissa << 13;
  }
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

template <typename T>
void from_raw(const std::string& raw, std::vector<double>& out, std::int64_t count, const std::string& file, const std::string& place) {
  if (static_cast<std::int64_t>(raw.size()) != count * static_cast<std::int64_t>(sizeof(T)))
    throw InputError(file, place, std::to_string(count) + " elements of " + std::to_string(sizeof(T)) + " bytes in raw_data, found " +
                                      std::to_string(raw.size()) + " bytes");
  out.resize(static_cast<std::size_t>(count));
  for (std::int64_t i = 0; i < count; ++i) {
    T v;
    std::memcpy(&v, raw.data() + i * static_cast<std::int64_t>(sizeof(T)), sizeof(T));
    out[static_cast<std::size_t>(i)] = static_cast<double>(v);
  }
}

template <typename Field>
void from_field(const Field& field, std::vector<double>& out, std::int64_t count, const std::string& file, const std::string& place) {
  if (field.size() != count)
    throw InputError(file, place, std::to_string(count) + " values, found " + std::to_string(field.size()));
  out.assign(field.begin(), field.end());
}

}  // namespace

std::vector<std::int64_t> KnownTensor::ints() const {
  std::vector<std::int64_t> out;
  out.reserve(values.size());
  for (double v : values) {
    if (std::isnan(v)) out.push_back(0);
    else if (v >= 9.2e18) out.push_back(std::numeric_limits<std::int64_t>::max());
    else if (v <= -9.2e18) out.push_back(std::numeric_limits<std::int64_t>::min());
    else out.push_back(static_cast<std::int64_t>(v));
  }
  return out;
}

std::vector<float> KnownTensor::floats() const { return {values.begin(), values.end()}; }

KnownTensor tensor_from_proto(const onnx::TensorProto& proto, const std::string& file, const std::string& place) {
  using onnx::TensorProto_DataType;
  KnownTensor t;
  std::int64_t count = 1;
  for (std::int64_t d : proto.dims()) {
    if (const auto problem = dimension_problem(d)) throw InputError(file, place, "a dimension " + *problem + ", found " + std::to_string(d));
    t.dims.push_back(d);
    count *= d;
    if (count > (std::int64_t{1} << 31)) throw InputError(file, place, "at most 2^31 elements in a tensor");
  }
  if (proto.data_location() == onnx::TensorProto_DataLocation_EXTERNAL)
    throw InputError(file, place, "tensor data inside the model (external data files are not supported; re-export with the weights embedded)");
  const std::string& raw = proto.raw_data();
  const bool has_raw = proto.has_raw_data();
  switch (proto.data_type()) {
    case TensorProto_DataType::TensorProto_DataType_FLOAT:
      if (has_raw) from_raw<float>(raw, t.values, count, file, place);
      else from_field(proto.float_data(), t.values, count, file, place);
      break;
    case TensorProto_DataType::TensorProto_DataType_DOUBLE:
      if (has_raw) from_raw<double>(raw, t.values, count, file, place);
      else from_field(proto.double_data(), t.values, count, file, place);
      break;
    case TensorProto_DataType::TensorProto_DataType_FLOAT16:
      if (has_raw) {
        std::vector<double> bits;
        from_raw<std::uint16_t>(raw, bits, count, file, place);
        for (double& b : bits) b = half_to_float(static_cast<std::uint16_t>(b));
        t.values = std::move(bits);
      } else {
        from_field(proto.int32_data(), t.values, count, file, place);
        for (double& b : t.values) b = half_to_float(static_cast<std::uint16_t>(b));
      }
      break;
    case TensorProto_DataType::TensorProto_DataType_BFLOAT16: {  // the high half of a float's bits
      std::vector<double> bits;
      if (has_raw) from_raw<std::uint16_t>(raw, bits, count, file, place);
      else from_field(proto.int32_data(), bits, count, file, place);
      for (double& b : bits) {
        const std::uint32_t word = static_cast<std::uint32_t>(b) << 16;
        float f;
        std::memcpy(&f, &word, sizeof f);
        b = f;
      }
      t.values = std::move(bits);
      break;
    }
    case TensorProto_DataType::TensorProto_DataType_INT64:
      t.kind = ValueKind::kInt;
      if (has_raw) from_raw<std::int64_t>(raw, t.values, count, file, place);
      else from_field(proto.int64_data(), t.values, count, file, place);
      break;
    case TensorProto_DataType::TensorProto_DataType_INT32:
      t.kind = ValueKind::kInt;
      if (has_raw) from_raw<std::int32_t>(raw, t.values, count, file, place);
      else from_field(proto.int32_data(), t.values, count, file, place);
      break;
    case TensorProto_DataType::TensorProto_DataType_INT8:
    case TensorProto_DataType::TensorProto_DataType_UINT8:
    case TensorProto_DataType::TensorProto_DataType_INT16:
    case TensorProto_DataType::TensorProto_DataType_UINT16:
    case TensorProto_DataType::TensorProto_DataType_BOOL:
      t.kind = proto.data_type() == TensorProto_DataType::TensorProto_DataType_BOOL ? ValueKind::kBool : ValueKind::kInt;
      if (has_raw) {
        const bool is_signed = proto.data_type() == TensorProto_DataType::TensorProto_DataType_INT8 ||
                               proto.data_type() == TensorProto_DataType::TensorProto_DataType_INT16;
        const bool two_bytes = proto.data_type() == TensorProto_DataType::TensorProto_DataType_INT16 ||
                               proto.data_type() == TensorProto_DataType::TensorProto_DataType_UINT16;
        if (two_bytes && is_signed) from_raw<std::int16_t>(raw, t.values, count, file, place);
        else if (two_bytes) from_raw<std::uint16_t>(raw, t.values, count, file, place);
        else if (is_signed) from_raw<std::int8_t>(raw, t.values, count, file, place);
        else from_raw<std::uint8_t>(raw, t.values, count, file, place);
      } else {
        from_field(proto.int32_data(), t.values, count, file, place);
      }
      break;
    default:
      throw InputError(file, place, "a float, integer or bool tensor (data type " + std::to_string(proto.data_type()) + " is not supported)");
  }
  return t;
}

KnownTensor load_tensor_file(const std::string& path) {
  const std::string bytes = read_file(path);  // regular files only, within the input limit
  onnx::TensorProto proto;
  if (!proto.ParseFromString(bytes)) throw InputError(path, "byte 0", "a serialized ONNX TensorProto");
  return tensor_from_proto(proto, path, "tensor '" + proto.name() + "'");
}

void save_tensor_file(const KnownTensor& tensor, const std::string& path, const std::string& name) {
  onnx::TensorProto proto;
  proto.set_name(name);
  for (std::int64_t d : tensor.dims) proto.add_dims(d);
  if (tensor.kind == ValueKind::kFloat) {
    proto.set_data_type(onnx::TensorProto_DataType::TensorProto_DataType_FLOAT);
    for (double v : tensor.values) proto.add_float_data(static_cast<float>(v));
  } else {
    proto.set_data_type(tensor.kind == ValueKind::kBool ? onnx::TensorProto_DataType::TensorProto_DataType_BOOL
                                                        : onnx::TensorProto_DataType::TensorProto_DataType_INT64);
    for (std::int64_t v : tensor.ints()) {
      if (tensor.kind == ValueKind::kBool) proto.add_int32_data(static_cast<std::int32_t>(v != 0));
      else proto.add_int64_data(v);
    }
  }
  write_file_atomically(path, proto.SerializeAsString());
}

}  // namespace perftune::frontend
