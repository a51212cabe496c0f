#pragma once
// The one exception type for bad input: it names the file, the place in it, and what was expected,
// so every importer and parser reports errors the same way.
#include <stdexcept>
#include <string>

namespace perftune {

class InputError : public std::runtime_error {
 public:
  // `place` is a JSON path, a line number ("line 12"), a byte offset or a record index.
  InputError(std::string file, std::string place, std::string expected);

  const std::string& file() const { return file_; }
  const std::string& place() const { return place_; }
  const std::string& expected() const { return expected_; }

 private:
  std::string file_;
  std::string place_;
  std::string expected_;
};

}  // namespace perftune
