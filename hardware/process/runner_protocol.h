#pragma once
// The runner protocol (version 1, hardware/README.md), both ends: perftune's CommandBackend sends a
// request and reads the response; a runner written with perftune (a rank of `mpirun`,
// distributed/rank_spread_backend.h) reads the request and writes the response.
//   request  {"protocol": "perftune-runner", "version": 1,
//             "kernel": {"key": ..., "name": ..., "program": <program JSON>},
//             "knobs": [{"name": ..., "values": [...]}, ...], "configs": [{knob: value, ...}, ...]}
//   response {"results": [{"status": "ok", "seconds": 1.2e-5, "spread": 0.01, "repeats": [...],
//                          "cost": 0.8, "message": ""}, ...]}   one per config, in order
#include <span>
#include <string>
#include <vector>

#include "ir/kernel.h"
#include "ir/measurement.h"
#include "ir/search_space.h"

namespace perftune {

inline constexpr int kRunnerProtocolVersion = 1;
// What a runner may print on stdout for a share of n configs: max(4 MiB, 4 KiB x n). A result
// with 30 repeats is ~0.7 KiB, so this is >= 5x any valid reply, and a runner that floods stdout
// costs perftune a few MiB per runner instead of all its memory (docs/hardening.md, figures).
inline constexpr std::size_t kMinRunnerReplyBytes = std::size_t{4} << 20;
inline constexpr std::size_t kRunnerReplyBytesPerConfig = 4096;
std::size_t runner_reply_limit(std::size_t configs);

// The request document for `configs` of `kernel` (exposed for runners' tests and docs).
std::string runner_request(const Kernel& kernel, const SearchSpace& space, std::span<const Config> configs);
// Parses a response with `expected` results. Throws InputError naming `source` and the JSON path
// when the reply as a whole is unusable (bad JSON, not {"results": [...]}, wrong count); a result
// that is invalid by itself (unknown status, an ok result without a valid runtime, a cost out of
// range) becomes a runtime_error naming its path, charged `cost_of_bad_result` seconds.
std::vector<MeasureResult> parse_runner_response(const std::string& text, std::size_t expected, const std::string& source,
                                                 double cost_of_bad_result = 0.0);

// What a request asks: the kernel (rebuilt from its program, whose key must match the request's;
// an empty program is a recorded kernel known by name and key alone),
// the space of its knobs (values only: the requester checked its constraint) and the configs.
struct RunnerRequest {
  Kernel kernel;
  SearchSpace space;
  std::vector<Config> configs;
};
// Throws InputError naming `source` and the JSON path of what is missing or wrong.
RunnerRequest parse_runner_request(const std::string& text, const std::string& source);
// The response document for `results`, one per config in order; parse_runner_response reads it
// back exactly (doubles round-trip).
std::string runner_response(std::span<const MeasureResult> results);

}  // namespace perftune
