#include "frontend/onnx_file.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "ir/input_error.h"

namespace perftune::frontend {

std::string read_model_bytes(const std::string& path, std::int64_t max_bytes, const std::string& what) {
  namespace fs = std::filesystem;
  std::error_code error;
  const fs::file_status status = fs::status(path, error);
  if (error || !fs::exists(status)) throw InputError(path, "file", "an existing " + what);
  if (!fs::is_regular_file(status)) throw InputError(path, "file", "a regular file as the " + what + " (not a folder, FIFO or device)");
  const auto size = static_cast<std::int64_t>(fs::file_size(path, error));
  if (error) throw InputError(path, "file", "a readable " + what);
  if (size > max_bytes)
    throw InputError(path, "file", "a " + what + " of at most " + std::to_string(max_bytes) + " bytes, found " + std::to_string(size) +
                                       " (ONNX's protobuf limit; larger models keep their weights in external data, which perftune does not read)");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path, "file", "a readable " + what);
  std::string bytes(static_cast<std::size_t>(size), '\0');
  in.read(bytes.data(), size);
  if (in.gcount() != size) throw InputError(path, "byte " + std::to_string(in.gcount()), "the whole " + what + " (it changed while read)");
  return bytes;
}

void write_model_bytes(const std::string& path, const std::string& bytes) {
  const std::string partial = path + ".partial";
  {
    std::ofstream out(partial, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!out) throw InputError(path, "file", "a writable path");
  }
  std::filesystem::rename(partial, path);
}

}  // namespace perftune::frontend
