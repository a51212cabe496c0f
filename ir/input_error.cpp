#include "ir/input_error.h"

namespace perftune {

namespace {
std::string compose(const std::string& file, const std::string& place, const std::string& expected) {
  std::string message = file.empty() ? std::string("<input>") : file;
  if (!place.empty()) message += ": " + place;
  return message + ": " + expected;
}
}  // namespace

InputError::InputError(std::string file, std::string place, std::string expected)
    : std::runtime_error(compose(file, place, expected)), file_(std::move(file)), place_(std::move(place)),
      expected_(std::move(expected)) {}

}  // namespace perftune
