#pragma once
// ONNX's node conformance suite (libonnx-testdata), run through the frontend: each case whose ops
// the frontend claims is imported, interpreted by the reference interpreter and compiled by
// Halide unfused, and both are compared with the case's expected outputs.
#include <filesystem>
#include <string>
#include <vector>

namespace perftune::conformance {

enum class Outcome { kPassed, kFailed, kSkipped };

struct CaseResult {
  std::string name;
  std::string op;          // the op the case is about
  Outcome outcome = Outcome::kSkipped;
  std::string reason;      // why it failed or was skipped
};

// The node suite's folder (PERFTUNE_ONNX_TESTDATA, else Debian's), or empty when absent.
std::filesystem::path node_suite();
// Every case folder of the suite, sorted.
std::vector<std::filesystem::path> node_cases(const std::filesystem::path& suite);
// Tolerances: ONNX's own backend tests use rtol 1e-3, atol 1e-7; these are tighter on the relative
// part, looser on the absolute one (outputs near zero after a cancellation).
inline constexpr double kRelativeTolerance = 1e-4, kAbsoluteTolerance = 1e-5;

CaseResult run_case(const std::filesystem::path& folder);

// A Markdown table: per op, cases passed, failed and skipped, and the skip reasons.
std::string summary_table(const std::vector<CaseResult>& results);

}  // namespace perftune::conformance
