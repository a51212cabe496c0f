#include "hardware/reference/output_check.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "hardware/reference/op_semantics.h"
#include "hardware/reference/reference_interpreter.h"

namespace perftune {

namespace {

// Agreement with the reference: kernels accumulate in f32 in a tiled order, the reference in
// double in index order. The rounding error of a K-term f32 sum is about
// sqrt(K) * 6e-8 * sum|terms| (random-walk bound, Higham "Accuracy and Stability", ch. 4), and the
// ops after it can amplify it (a quotient of two sums, an exponential). 1e-3 relative plus 1e-4
// of the output's largest magnitude holds for K up to 2^16 terms; above that the relative part
// grows as sqrt(K / 2^16). Measured: the XLA kernel fusion.multiply.7897 (two sums of 1.77M
// terms, divided, through an exponential) is off by 1.5e-3 relative in every schedule,
// Mullapudi2016's included; its tolerance is 5.2e-3.
constexpr double kRelativeTolerance = 1e-3;
constexpr double kScaleTolerance = 1e-4;
constexpr double kTermsWithinBaseTolerance = 65536;
// How many kernels' reference outputs stay in memory (a 1024x1024 output is 4 MiB).
constexpr std::size_t kReferenceCacheEntries = 16;

}  // namespace

double relative_tolerance(const Program& program) {
  double terms = 1;
  for (OpId id = 0; id < program.size(); ++id)
    if (is_reduction_opcode(program.op(id).opcode)) terms = std::max(terms, static_cast<double>(reduction_form(program, id).extent()));
  return kRelativeTolerance * std::max(1.0, std::sqrt(terms / kTermsWithinBaseTolerance));
}

std::string compare_output(const std::vector<float>& got, const std::vector<float>& want, const std::string& name,
                           double relative) {
  if (got.size() != want.size()) return "output " + name + " has " + std::to_string(got.size()) + " elements, expected " + std::to_string(want.size());
  double scale = 0.0;
  for (float w : want)
    if (std::isfinite(w)) scale = std::max(scale, static_cast<double>(std::fabs(w)));
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double g = got[i], w = want[i];
    // Once f32 overflows, whether inf, -inf or NaN comes out depends on the order of the
    // overflowing ops (inf - inf in one order, -inf in another): any non-finite value agrees.
    const bool agree = std::isfinite(w) ? std::fabs(g - w) <= relative * std::fabs(w) + kScaleTolerance * scale : !std::isfinite(g);
    if (!agree) {
      std::ostringstream message;
      message.precision(7);
      message << "output " << name << " differs from the reference at element " << i << ": got " << g << ", expected " << w
              << " (tolerance " << relative << " relative + " << kScaleTolerance << " x max|reference| " << scale << ")";
      return message.str();
    }
  }
  return "";
}

const std::vector<std::vector<float>>& ReferenceOutputs::of(const Kernel& kernel, const std::vector<OpId>& outputs, std::uint64_t seed) {
  std::string key = kernel.key() + "/" + std::to_string(seed);
  for (OpId id : outputs) key += "/" + std::to_string(id);
  if (auto it = cache_.find(key); it != cache_.end()) return it->second;
  if (cache_.size() >= kReferenceCacheEntries) cache_.erase(cache_.begin());
  const auto values = interpret(kernel.body(), make_inputs(kernel.body(), seed));
  std::vector<std::vector<float>> selected;
  for (OpId id : outputs) selected.push_back(values[id]);
  return cache_[key] = std::move(selected);
}

std::string check_outputs(const Kernel& kernel, const std::vector<OpId>& outputs, const std::vector<float>& got,
                          const std::vector<std::vector<float>>& want) {
  std::size_t total = 0;
  for (const auto& w : want) total += w.size();
  if (got.size() != total) return "the kernel wrote " + std::to_string(got.size()) + " output values, expected " + std::to_string(total);
  const double relative = relative_tolerance(kernel.body());
  std::size_t offset = 0;
  for (std::size_t o = 0; o < outputs.size(); ++o) {
    const std::size_t n = want[o].size();
    const std::string problem = compare_output(std::vector<float>(got.begin() + static_cast<long>(offset), got.begin() + static_cast<long>(offset + n)),
                                               want[o], kernel.body().op(outputs[o]).name, relative);
    if (!problem.empty()) return problem;
    offset += n;
  }
  return "";
}

}  // namespace perftune
