#include "hardware/reference/elementwise_ops.h"

#include <cmath>
#include <limits>

namespace perftune {

namespace {
// GELU, tanh form (Hendrycks & Gimpel 2016, eq. for "approximate"): sqrt(2/pi) and 0.044715.
constexpr float kGeluScale = 0.7978845608f;
constexpr float kGeluCubic = 0.044715f;
}  // namespace

const std::vector<ElementwiseOp>& elementwise_ops() {
  // Maximum/minimum propagate the first operand's NaN like the ternary does in both forms.
  static const std::vector<ElementwiseOp> kOps = {
      {"add", 2, [](const float* a) { return a[0] + a[1]; }},
      {"subtract", 2, [](const float* a) { return a[0] - a[1]; }},
      {"multiply", 2, [](const float* a) { return a[0] * a[1]; }},
      {"divide", 2, [](const float* a) { return a[0] / a[1]; }},
      {"maximum", 2, [](const float* a) { return a[0] > a[1] ? a[0] : a[1]; }},
      {"minimum", 2, [](const float* a) { return a[0] < a[1] ? a[0] : a[1]; }},
      {"power", 2, [](const float* a) { return __builtin_powf(a[0], a[1]); }},
      {"negate", 1, [](const float* a) { return -a[0]; }},
      {"abs", 1, [](const float* a) { return __builtin_fabsf(a[0]); }},
      {"exponential", 1, [](const float* a) { return __builtin_expf(a[0]); }},
      {"exponential-minus-one", 1, [](const float* a) { return __builtin_expm1f(a[0]); }},
      {"log", 1, [](const float* a) { return __builtin_logf(a[0]); }},
      {"log-plus-one", 1, [](const float* a) { return __builtin_log1pf(a[0]); }},
      {"sqrt", 1, [](const float* a) { return __builtin_sqrtf(a[0]); }},
      {"rsqrt", 1, [](const float* a) { return 1.0f / __builtin_sqrtf(a[0]); }},
      {"tanh", 1, [](const float* a) { return __builtin_tanhf(a[0]); }},
      {"logistic", 1, [](const float* a) { return 1.0f / (1.0f + __builtin_expf(-a[0])); }},
      {"sigmoid", 1, [](const float* a) { return 1.0f / (1.0f + __builtin_expf(-a[0])); }},
      {"sine", 1, [](const float* a) { return __builtin_sinf(a[0]); }},
      {"cosine", 1, [](const float* a) { return __builtin_cosf(a[0]); }},
      {"erf", 1, [](const float* a) { return __builtin_erff(a[0]); }},
      {"floor", 1, [](const float* a) { return __builtin_floorf(a[0]); }},
      {"ceil", 1, [](const float* a) { return __builtin_ceilf(a[0]); }},
      {"sign", 1, [](const float* a) { return static_cast<float>((a[0] > 0.0f) - (a[0] < 0.0f)); }},
      {"relu", 1, [](const float* a) { return a[0] > 0.0f ? a[0] : 0.0f; }},
      {"gelu", 1,
       [](const float* a) { return 0.5f * a[0] * (1.0f + __builtin_tanhf(kGeluScale * (a[0] + kGeluCubic * a[0] * a[0] * a[0]))); }},
      {"copy", 1, [](const float* a) { return a[0]; }},
      {"convert", 1, [](const float* a) { return a[0]; }},  // f32 -> f32 only
      {"clamp", 3,  // XLA order: clamp(min, operand, max)
       [](const float* a) { return a[1] < a[0] ? a[0] : (a[1] > a[2] ? a[2] : a[1]); }},
  };
  return kOps;
}

const ElementwiseOp* find_elementwise_op(std::string_view opcode) {
  for (const ElementwiseOp& op : elementwise_ops())
    if (op.opcode == opcode) return &op;
  return nullptr;
}

std::optional<float> reducer_identity(std::string_view opcode) {
  if (opcode == "add") return 0.0f;
  if (opcode == "multiply") return 1.0f;
  if (opcode == "maximum") return -std::numeric_limits<float>::infinity();
  if (opcode == "minimum") return std::numeric_limits<float>::infinity();
  return std::nullopt;
}

}  // namespace perftune
