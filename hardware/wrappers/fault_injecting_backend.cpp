#include "hardware/wrappers/fault_injecting_backend.h"

#include <chrono>
#include <cmath>
#include <random>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "ir/random.h"

namespace perftune {

namespace {

constexpr double kOffFactor = 100.0;  // the "a time 100x off"
// SIGSEGV as subprocess.cpp's describe_exit words it for a real runner that crashed.
constexpr std::string_view kCrashMessage = "killed by signal 11 (Segmentation fault)";

void sleep_seconds(double seconds) {
  if (seconds > 0) std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
}

}  // namespace

std::string_view fault_kind_name(FaultKind kind) {
  switch (kind) {
    case FaultKind::kCompileError: return "compile_error";
    case FaultKind::kHang: return "hang";
    case FaultKind::kCrash: return "crash";
    case FaultKind::kNaN: return "nan";
    case FaultKind::kNegative: return "negative";
    case FaultKind::kOff100x: return "off_100x";
  }
  return "unknown";
}

std::vector<FaultKind> all_fault_kinds() {
  std::vector<FaultKind> kinds;
  for (std::size_t i = 0; i < kFaultKindCount; ++i) kinds.push_back(static_cast<FaultKind>(i));
  return kinds;
}

std::optional<FaultKind> parse_fault_kind(std::string_view name) {
  for (FaultKind kind : all_fault_kinds())
    if (fault_kind_name(kind) == name) return kind;
  return std::nullopt;
}

FaultInjectingBackend::FaultInjectingBackend(std::unique_ptr<Backend> inner, FaultPlan plan)
    : inner_(std::move(inner)), plan_(std::move(plan)) {
  if (!inner_) throw std::invalid_argument("FaultInjectingBackend needs an inner backend");
  if (!(plan_.share >= 0 && plan_.share <= 1)) throw std::invalid_argument("fault share must be in [0, 1]");
  if (!(plan_.hang_seconds >= 0 && plan_.hang_seconds <= kMaxHangSeconds))
    throw std::invalid_argument("hang_seconds must be in [0, " + std::to_string(kMaxHangSeconds) + "]");
  if (!(plan_.latency_seconds >= 0 && plan_.latency_seconds <= kMaxHangSeconds))
    throw std::invalid_argument("latency_seconds must be in [0, " + std::to_string(kMaxHangSeconds) + "]");
  if (plan_.kinds.empty()) plan_.kinds = all_fault_kinds();
}

std::optional<FaultKind> FaultInjectingBackend::draw(const Config& config) {
  const std::uint32_t attempt = attempts_[config]++;
  const std::uint64_t hash = ConfigHash{}(config);
  // std::seed_seq is fully specified by the standard: the same draws on every platform.
  std::seed_seq seq{static_cast<std::uint32_t>(plan_.seed), static_cast<std::uint32_t>(plan_.seed >> 32),
                    static_cast<std::uint32_t>(hash), static_cast<std::uint32_t>(hash >> 32), attempt};
  Rng rng(seq);
  if (!(uniform_unit(rng) < plan_.share)) return std::nullopt;
  return plan_.kinds[uniform_index(rng, plan_.kinds.size())];
}

std::vector<MeasureResult> FaultInjectingBackend::measure(const Kernel& kernel, const SearchSpace& space,
                                                          std::span<const Config> configs) {
  std::vector<std::optional<FaultKind>> faults;
  std::vector<Config> passed;  // what reaches the inner backend
  for (const Config& config : configs) {
    faults.push_back(draw(config));
    ++measurements_;
    if (faults.back()) ++injected_[static_cast<std::size_t>(*faults.back())];
    const bool never_runs = faults.back() && (*faults.back() == FaultKind::kCompileError ||
                                              *faults.back() == FaultKind::kHang || *faults.back() == FaultKind::kCrash);
    if (!never_runs) passed.push_back(config);
  }
  sleep_seconds(plan_.latency_seconds * static_cast<double>(configs.size()));
  std::vector<MeasureResult> inner_results;
  if (!passed.empty()) inner_results = inner_->measure(kernel, space, passed);
  if (inner_results.size() != passed.size())
    throw std::runtime_error("backend " + inner_->fingerprint() + " returned " + std::to_string(inner_results.size()) +
                             " results for " + std::to_string(passed.size()) + " configs");

  std::vector<MeasureResult> results;
  std::size_t next = 0;
  for (const auto& fault : faults) {
    if (!fault) {
      results.push_back(std::move(inner_results[next++]));
      continue;
    }
    switch (*fault) {
      case FaultKind::kCompileError:
        results.push_back(MeasureResult::failure(MeasureStatus::kCompileError, "injected compile error"));
        continue;
      case FaultKind::kHang:
        sleep_seconds(plan_.hang_seconds);
        results.push_back(MeasureResult::failure(MeasureStatus::kTimeout, "injected hang: no result within " +
                                                                              std::to_string(plan_.hang_seconds) + " s",
                                                 plan_.hang_seconds));
        continue;
      case FaultKind::kCrash:
        results.push_back(MeasureResult::failure(MeasureStatus::kRuntimeError, std::string(kCrashMessage) + " (injected crash)"));
        continue;
      default: break;
    }
    MeasureResult result = std::move(inner_results[next++]);
    if (result.ok()) {
      auto corrupt = [&](double seconds) {
        if (*fault == FaultKind::kNaN) return static_cast<double>(NAN);
        if (*fault == FaultKind::kNegative) return -seconds;
        return seconds / kOffFactor;
      };
      result.seconds = corrupt(result.seconds);
      for (double& repeat : result.repeats) repeat = corrupt(repeat);
    }
    results.push_back(std::move(result));
  }
  return results;
}

std::string FaultInjectingBackend::fingerprint() const {
  std::ostringstream out;
  out << inner_->fingerprint() << "+faults(share=" << plan_.share << ",seed=" << plan_.seed << ",kinds=";
  for (std::size_t i = 0; i < plan_.kinds.size(); ++i) out << (i ? "|" : "") << fault_kind_name(plan_.kinds[i]);
  out << ")";
  return out.str();
}

std::size_t FaultInjectingBackend::injected_total() const {
  std::size_t total = 0;
  for (std::size_t count : injected_) total += count;
  return total;
}

}  // namespace perftune
