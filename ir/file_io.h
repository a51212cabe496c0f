#pragma once
// Whole-file reads with errors that name the file, and transparent gzip. Every input perftune
// reads (configs, programs, record logs, corpora, checkpoints and their weights, summaries) goes
// through read_file, so one place refuses what is not a regular file and what is too large.
#include <cstdint>
#include <string>

namespace perftune {

// The setting that raises the size limit of every input: an environment variable holding MiB.
inline constexpr const char* kMaxInputSetting = "PERFTUNE_MAX_INPUT_MB";
// Its default. The largest input shipped or shared (a Kernel Tuner cache, a GEMM record log) is
// tens of MB and a trained checkpoint's weights a few MB, so 1 GiB leaves room while a stray
// multi-GB file (or a device) is refused before it is read.
inline constexpr std::uint64_t kDefaultMaxInputMiB = 1024;
// The limit in bytes: kMaxInputSetting if set (a positive whole number of MiB), else the default.
// Throws InputError naming the setting if it is set to anything else.
std::uint64_t max_input_bytes();

// Opens `path` with `flags` (O_RDONLY, or O_RDWR | O_CREAT | O_APPEND for a log) and returns the
// descriptor, which the caller closes. Only a regular file, or a symlink to one, is accepted: a
// FIFO would block the open or the first read, a device (/dev/zero) never ends. Throws InputError
// naming the file and what it is otherwise; `what` says what the file was meant to be.
int open_regular_file(const std::string& path, int flags, const std::string& what = "a regular file");

// Throws InputError if the file cannot be read, is a folder or not a regular file, or is larger
// than max_input_bytes() (naming its size, the limit and kMaxInputSetting).
std::string read_file(const std::string& path);
// Reads the file and, if it starts with the gzip magic, inflates it. A truncated or corrupt
// stream is an InputError naming the byte offset where inflation failed; an inflated size above
// max_input_bytes() is one too.
std::string read_maybe_gzip(const std::string& path);
// Inflates an in-memory gzip stream; `file` names it in errors.
std::string gunzip(const std::string& compressed, const std::string& file);
bool is_gzip(const std::string& bytes);
// Whether something exists at `path`; false, not an exception, for a path the system cannot look
// up (a name too long, a component that is not a folder): user-given paths are checked with it,
// so a bad one is reported as missing, with its place, like any other.
bool path_exists(const std::string& path);
// Writes `text` (as is) to PATH.tmp and renames it over `path`, so a reader or a killed process
// never sees a half-written file. Throws std::runtime_error naming the file if the write fails.
void write_file_atomically(const std::string& path, const std::string& text);

}  // namespace perftune
