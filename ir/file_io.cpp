#include "ir/file_io.h"

#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "ir/input_error.h"

namespace perftune {

std::string read_file(const std::string& path) {
  // A folder opens like an empty file on Linux and would be reported as empty JSON or a bad header.
  std::error_code error;
  if (std::filesystem::is_directory(path, error)) throw InputError(path, "", "a file, but this is a folder");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path, "", "a readable file (it does not exist or cannot be opened)");
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

bool is_gzip(const std::string& bytes) {
  return bytes.size() >= 2 && static_cast<unsigned char>(bytes[0]) == 0x1f && static_cast<unsigned char>(bytes[1]) == 0x8b;
}

std::string gunzip(const std::string& compressed, const std::string& file) {
  z_stream stream{};
  if (inflateInit2(&stream, 16 + MAX_WBITS) != Z_OK) throw std::runtime_error("zlib: inflateInit2 failed");
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(compressed.data()));
  stream.avail_in = static_cast<uInt>(compressed.size());
  std::string out;
  char chunk[1 << 16];
  int status = Z_OK;
  while (status != Z_STREAM_END) {
    stream.next_out = reinterpret_cast<Bytef*>(chunk);
    stream.avail_out = sizeof chunk;
    status = inflate(&stream, Z_NO_FLUSH);
    out.append(chunk, sizeof chunk - stream.avail_out);
    if (status == Z_STREAM_END) break;
    if (status != Z_OK || (stream.avail_in == 0 && stream.avail_out != 0)) {
      const auto offset = stream.total_in;
      const std::string reason = status == Z_OK || status == Z_BUF_ERROR ? "the stream ends early (truncated file)"
                                                                         : (stream.msg ? stream.msg : "corrupt data");
      inflateEnd(&stream);
      throw InputError(file, "byte " + std::to_string(offset), "a complete gzip stream, but " + reason);
    }
  }
  inflateEnd(&stream);
  return out;
}

std::string read_maybe_gzip(const std::string& path) {
  std::string bytes = read_file(path);
  return is_gzip(bytes) ? gunzip(bytes, path) : bytes;
}

bool path_exists(const std::string& path) {
  std::error_code error;
  return std::filesystem::exists(path, error);
}

void write_file_atomically(const std::string& path, const std::string& text) {
  const std::string temporary = path + ".tmp";
  {
    std::ofstream out(temporary, std::ios::trunc);
    out << text;
    if (!out) throw std::runtime_error("cannot write " + temporary);
  }
  std::filesystem::rename(temporary, path);
}

}  // namespace perftune
