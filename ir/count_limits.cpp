#include "ir/count_limits.h"

namespace perftune {

std::uint64_t bounded_count(const JsonView& value, std::uint64_t at_least, std::uint64_t at_most, const std::string& what) {
  const std::string expected = "a count of " + what + " from " + std::to_string(at_least) + " to " + std::to_string(at_most);
  const std::int64_t count = value.as_int();
  if (count < 0 || static_cast<std::uint64_t>(count) < at_least || static_cast<std::uint64_t>(count) > at_most)
    value.fail(expected + ", found " + std::to_string(count));
  return static_cast<std::uint64_t>(count);
}

}  // namespace perftune
