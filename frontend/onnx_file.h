#pragma once
// Reading and writing the binary files of the ONNX frontend (models, tensor files) with the
// checks every input gets: a regular file (a FIFO or a device would hang or never end), at most
// `max_bytes` (an error names the file, its size, the limit and the option that raises it).
#include <cstdint>
#include <string>

namespace perftune::frontend {

// ONNX's own limit for a model with embedded weights (protobuf's 2 GiB).
inline constexpr std::int64_t kMaxModelBytes = std::int64_t{1} << 31;

std::string read_model_bytes(const std::string& path, std::int64_t max_bytes, const std::string& what);
void write_model_bytes(const std::string& path, const std::string& bytes);

}  // namespace perftune::frontend
