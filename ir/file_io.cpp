#include "ir/file_io.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "ir/input_error.h"

namespace perftune {

std::uint64_t max_input_bytes() {
  const char* text = std::getenv(kMaxInputSetting);
  if (!text || !*text) return kDefaultMaxInputMiB << 20;
  char* end = nullptr;
  errno = 0;
  const unsigned long long mib = std::strtoull(text, &end, 10);
  // Above 2^40 MiB the byte count would overflow; no machine holds such a file in memory anyway.
  if (errno != 0 || *end != '\0' || text[0] == '-' || mib == 0 || mib > (1ULL << 40))
    throw InputError(std::string("environment variable ") + kMaxInputSetting, "",
                     std::string("a whole number of MiB above 0 (the size limit of every input file), got '") + text + "'");
  return static_cast<std::uint64_t>(mib) << 20;
}

namespace {

std::string kind_of(mode_t mode) {
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

std::string mib_text(std::uint64_t bytes) {
  std::ostringstream out;
  out.precision(bytes < (std::uint64_t{10} << 20) ? 3 : 6);
  out << static_cast<double>(bytes) / (1 << 20) << " MiB";
  return out.str();
}

[[noreturn]] void too_large(const std::string& path, std::uint64_t size, std::uint64_t limit, const std::string& what) {
  throw InputError(path, "", "a file of at most " + mib_text(limit) + ", but " + what + " " + mib_text(size) + " (" +
                                 std::to_string(size) + " bytes); set " + kMaxInputSetting + " (MiB) to raise the limit");
}

}  // namespace

int open_regular_file(const std::string& path, int flags, const std::string& what) {
  // A folder opens like an empty file on Linux and would be reported as empty JSON or a bad header.
  std::error_code error;
  if (std::filesystem::is_directory(path, error)) throw InputError(path, "", "a file, but this is a folder");
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer forever. It has no
  // effect on a regular file, the only kind kept.
  const int fd = ::open(path.c_str(), flags | O_NONBLOCK | O_CLOEXEC, 0644);
  if (fd < 0) {
    if ((flags & O_CREAT) == 0 && (errno == ENOENT || errno == ENOTDIR || errno == EACCES || errno == ENAMETOOLONG))
      throw InputError(path, "", "a readable file (it does not exist or cannot be opened)");
    throw InputError(path, "", what + " that can be opened (" + std::strerror(errno) + ")");
  }
  struct stat info {};
  if (::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
    const mode_t mode = info.st_mode;
    ::close(fd);
    if (S_ISDIR(mode)) throw InputError(path, "", "a file, but this is a folder");
    throw InputError(path, "", what + " (a regular file, or a symlink to one), but this is " + kind_of(mode));
  }
  const int status = ::fcntl(fd, F_GETFL);
  if (status >= 0) (void)::fcntl(fd, F_SETFL, status & ~O_NONBLOCK);
  return fd;
}

std::string read_file(const std::string& path) {
  const std::uint64_t limit = max_input_bytes();
  const int fd = open_regular_file(path, O_RDONLY);
  struct stat info {};
  if (::fstat(fd, &info) == 0 && static_cast<std::uint64_t>(info.st_size) > limit) {
    ::close(fd);
    too_large(path, static_cast<std::uint64_t>(info.st_size), limit, "it has");
  }
  std::string bytes;
  bytes.reserve(static_cast<std::size_t>(info.st_size));
  char chunk[1 << 16];
  while (true) {
    const ssize_t n = ::read(fd, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int error = errno;
      ::close(fd);
      throw InputError(path, "", std::string("a readable file (") + std::strerror(error) + ")");
    }
    if (n == 0) break;
    bytes.append(chunk, static_cast<std::size_t>(n));
    // A file that grows while it is read is held to the limit too.
    if (bytes.size() > limit) {
      ::close(fd);
      too_large(path, bytes.size(), limit, "it has grown to more than");
    }
  }
  ::close(fd);
  return bytes;
}

bool is_gzip(const std::string& bytes) {
  return bytes.size() >= 2 && static_cast<unsigned char>(bytes[0]) == 0x1f && static_cast<unsigned char>(bytes[1]) == 0x8b;
}

std::string gunzip(const std::string& compressed, const std::string& file) {
  z_stream stream{};
  if (inflateInit2(&stream, 16 + MAX_WBITS) != Z_OK) throw std::runtime_error("zlib: inflateInit2 failed");
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(compressed.data()));
  stream.avail_in = static_cast<uInt>(compressed.size());
  const std::uint64_t limit = max_input_bytes();
  std::string out;
  char chunk[1 << 16];
  int status = Z_OK;
  while (status != Z_STREAM_END) {
    stream.next_out = reinterpret_cast<Bytef*>(chunk);
    stream.avail_out = sizeof chunk;
    status = inflate(&stream, Z_NO_FLUSH);
    out.append(chunk, sizeof chunk - stream.avail_out);
    // A small archive can inflate without bound (a 1 MB gzip of zeros is 1 GB): held to the limit.
    if (out.size() > limit) {
      inflateEnd(&stream);
      too_large(file, out.size(), limit, "its gzip stream inflates to more than");
    }
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
