#include "frontend/reductions.h"

#include <algorithm>

namespace perftune::frontend {

OpId keep_dims(ProgramBuilder& b, const std::string& hint, OpId reduced, const Dims& x_dims, const Dims& axes) {
  Dims kept = x_dims;
  for (std::int64_t a : axes) kept[static_cast<std::size_t>(a)] = 1;
  return b.reshape(hint, reduced, kept);
}

OpId mean_over(ProgramBuilder& b, const std::string& hint, OpId x, const Dims& axes) {
  const Dims dims = b.dims(x);
  std::int64_t count = 1;
  for (std::int64_t a : axes) count *= dims[static_cast<std::size_t>(a)];
  const OpId sum = b.reduce(hint + ".sum", x, axes, "add");
  return keep_dims(b, hint, b.with_scalar(hint, "divide", sum, static_cast<float>(count)), dims, axes);
}

}  // namespace perftune::frontend
