#pragma once
// The library reference for a kernel: each of its dots as one (batched) GEMM call and each
// convolution as one torch convolution, in the layout the library wants (the operands already
// transposed and padded, as a user calling the library would arrange them). The BLAS runner
// (hardware/library/worker/blas_runner.cpp) times the calls in sequence with torch on this CPU: torch::mm / bmm
// call the system BLAS (OpenBLAS here), torch's f32 convolution calls oneDNN. The kernel's other
// ops (a bias, an activation, a softmax) are not timed, so the figure is a lower bound of what an
// implementation on the libraries would take.
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "ir/kernel.h"

namespace perftune {

struct BlasProblem {
  std::string library;  // "OpenBLAS" (dots), "oneDNN" (convolutions) or "OpenBLAS+oneDNN"
  std::string calls;    // "torch::mm [1024x1024]x[1024x1024]", "3 calls: torch::mm ..., ..."
  // The runner's "calls", in program order: {"kind": "gemm", "batch", "m", "k", "n"} or
  // {"kind": "conv", "input", "weight", "stride", "padding", "dilation", "groups"?}.
  nlohmann::json request = nlohmann::json::array();
};

// The kernel's dots and convolutions as library calls; nullopt when it has none, or has one a
// library does not take as it is (a convolution with base dilation).
std::optional<BlasProblem> blas_problem(const Kernel& kernel);

}  // namespace perftune
