#include "ir/config.h"

namespace perftune {

std::string Config::to_string() const {
  std::string text = "[";
  for (std::size_t i = 0; i < values.size(); ++i) text += (i ? "," : "") + std::to_string(values[i]);
  return text + "]";
}

std::size_t ConfigHash::operator()(const Config& config) const noexcept {
  std::uint64_t hash = 1469598103934665603ull;  // FNV-1a offset basis, mixing whole values
  for (std::int64_t v : config.values) {
    hash ^= static_cast<std::uint64_t>(v) + 0x9e3779b97f4a7c15ull + (hash << 6) + (hash >> 2);
    hash *= 1099511628211ull;
  }
  return static_cast<std::size_t>(hash);
}

}  // namespace perftune
