#pragma once
// A configuration: one integer per knob of a SearchSpace, in the space's knob order. Tile bounds
// are knobs too. Kept as a flat vector because search scores thousands of them per round.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace perftune {

struct Config {
  std::vector<std::int64_t> values;

  bool operator==(const Config&) const = default;
  bool operator<(const Config& other) const { return values < other.values; }
  std::string to_string() const;  // "[64,32,1]"
};

struct ConfigHash {
  std::size_t operator()(const Config& config) const noexcept;
};

}  // namespace perftune
