#pragma once
// Checking a live kernel's outputs against the reference interpreter (reference_interpreter.h),
// with the reference outputs of recent kernels kept in memory (every config of a kernel is
// checked against the same values).
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "ir/kernel.h"

namespace perftune {

// The relative part of the tolerance for a kernel's outputs: 1e-3, larger for reductions of more
// than 2^16 terms (see the .cpp).
double relative_tolerance(const Program& program);
// Why `got` differs from `want`, or empty if they agree within `relative` x |want| + 1e-4 x
// max |want|.
std::string compare_output(const std::vector<float>& got, const std::vector<float>& want, const std::string& name,
                           double relative = 1e-3);

class ReferenceOutputs {
 public:
  // The reference values of `outputs` of `kernel` on the inputs of `seed` (input_data.h).
  const std::vector<std::vector<float>>& of(const Kernel& kernel, const std::vector<OpId>& outputs, std::uint64_t seed);

 private:
  std::map<std::string, std::vector<std::vector<float>>> cache_;
};

// Compares raw concatenated f32 outputs (a runner's output file) with the reference; empty if
// they agree, else the first difference.
std::string check_outputs(const Kernel& kernel, const std::vector<OpId>& outputs, const std::vector<float>& got,
                          const std::vector<std::vector<float>>& want);

}  // namespace perftune
