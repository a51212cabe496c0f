#pragma once
// Whole-file reads with errors that name the file, and transparent gzip.
#include <string>

namespace perftune {

// Throws InputError if the file cannot be read or is a folder.
std::string read_file(const std::string& path);
// Reads the file and, if it starts with the gzip magic, inflates it. A truncated or corrupt
// stream is an InputError naming the byte offset where inflation failed.
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
