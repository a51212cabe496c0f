#pragma once
// Upper bounds on the counts a config may ask for. A count above one is a typo or a plan no machine
// finishes (a billion programs, seeds or configs), and read as it is it runs for hours, fills the disk
// or ends in a bare std::bad_alloc. Each is refused where it is parsed, with its JSON path. The bounds
// are far above what any config of the project asks for; each comment says what it guards.
#include <cstdint>
#include <string>

#include "ir/json_view.h"

namespace perftune {

// Measurements in one campaign's or experiment's budget. The experiment's summary keeps a value per
// budget step of every curve, and the random baseline is computed at each step.
inline constexpr std::uint64_t kMaxMeasurementBudget = 1'000'000;
// Configs planned for one kernel or program (`collect`'s per-kernel counts): the sampler draws up to
// 20 times as many, and a measured config takes milliseconds at the least.
inline constexpr std::uint64_t kMaxConfigsPerKernel = 100'000;
// Programs one `generate` spec writes, a file each.
inline constexpr std::uint64_t kMaxGeneratedPrograms = 1'000'000;
// Seeds of one experiment, each a full run of every strategy on every space.
inline constexpr std::uint64_t kMaxSeeds = 10'000;

// `value` as an integer in [at_least, at_most]; otherwise an InputError at its path, e.g.
// "$.count: expected a count of programs from 0 to 1000000, found 1000000000000".
std::uint64_t bounded_count(const JsonView& value, std::uint64_t at_least, std::uint64_t at_most, const std::string& what);

}  // namespace perftune
