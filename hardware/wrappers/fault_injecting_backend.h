#pragma once
// A Backend decorator for rehearsing bad hardware: on a seeded share of measurements it injects a
// fault instead of (or on top of) the inner backend's result, so the tuning loop's failure
// handling (records, retries, quarantine, confirmation of a new best) can be tested and rehearsed
// from a campaign ("backend": {..., "faults": {...}}, see autotuner/factories/backend_factory.h).
//
// Whether a measurement is faulted, and how, depends only on (seed, config, attempt number of
// that config), never on batch order or timing, so a campaign resumed from its log meets the
// same faults as an uninterrupted one.
#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "hardware/backend.h"

namespace perftune {

enum class FaultKind {
  kCompileError,  // the kernel does not build: compile_error, never reaches the device
  kHang,          // no result: holds the call for hang_seconds (bounded), then timeout
  kCrash,         // the runner dies: runtime_error "killed by signal 11 (...)", as a real crash reports
  kNaN,           // the device reports ok with a NaN time
  kNegative,      // the device reports ok with a negative time (a broken timer)
  kOff100x,       // the device reports ok with a time 100x too fast (the dangerous direction:
                  // a too-slow time only hides a candidate, a too-fast one becomes a false best)
};
inline constexpr std::size_t kFaultKindCount = 6;

std::string_view fault_kind_name(FaultKind kind);  // "compile_error", "hang", "crash", "nan", "negative", "off_100x"
std::optional<FaultKind> parse_fault_kind(std::string_view name);
std::vector<FaultKind> all_fault_kinds();

struct FaultPlan {
  double share = 0.0;             // of measurements (attempts) that get a fault, in [0, 1]
  std::vector<FaultKind> kinds;   // drawn uniformly per faulted measurement; empty = all kinds
  std::uint64_t seed = 0;
  double hang_seconds = 0.01;     // wall time a hang holds the call; also charged as its cost
  double latency_seconds = 0.0;   // extra wall time per measured config (rehearse slow hardware)
};

// Longest hang a plan may ask for: a rehearsal must not stall a campaign (ours: one minute).
inline constexpr double kMaxHangSeconds = 60.0;

class FaultInjectingBackend : public Backend {
 public:
  // Throws std::invalid_argument for a share outside [0, 1], a negative or too long hang, or a
  // negative latency.
  FaultInjectingBackend(std::unique_ptr<Backend> inner, FaultPlan plan);

  // Configs drawn for compile_error, hang or crash never reach the inner backend; the others are
  // measured by it in one call and corrupted afterwards (only when the inner result is ok).
  std::vector<MeasureResult> measure(const Kernel& kernel, const SearchSpace& space,
                                     std::span<const Config> configs) override;
  // The inner fingerprint plus the plan, so rehearsal records never pass for real ones on resume.
  std::string fingerprint() const override;
  // The inner backend's peers, unfaulted: they are references, not part of the rehearsal.
  std::vector<PeerMeasurement> measure_peers(const Kernel& kernel) override { return inner_->measure_peers(kernel); }

  const Backend& inner() const { return *inner_; }
  const FaultPlan& plan() const { return plan_; }
  std::size_t measurements() const { return measurements_; }  // attempts seen so far
  std::size_t injected(FaultKind kind) const { return injected_[static_cast<std::size_t>(kind)]; }
  std::size_t injected_total() const;

 private:
  std::optional<FaultKind> draw(const Config& config);

  std::unique_ptr<Backend> inner_;
  FaultPlan plan_;
  std::unordered_map<Config, std::uint32_t, ConfigHash> attempts_;
  std::size_t measurements_ = 0;
  std::array<std::size_t, kFaultKindCount> injected_{};
};

}  // namespace perftune
