#include "surrogate/transfer/cholesky.h"

#include <cmath>

#include <Eigen/Cholesky>
#include <Eigen/Core>

namespace perftune {

namespace {

using RowMajor = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

auto lower(const std::vector<double>& l, std::size_t n) {
  const auto size = static_cast<Eigen::Index>(n);
  return Eigen::Map<const RowMajor>(l.data(), size, size).triangularView<Eigen::Lower>();
}

}  // namespace

bool cholesky_factor(std::vector<double>& m, std::size_t n) {
  const auto size = static_cast<Eigen::Index>(n);
  // In place on a row-major map: Eigen writes L into the lower triangle and reads only it.
  Eigen::Map<RowMajor> map(m.data(), size, size);
  Eigen::LLT<Eigen::Ref<RowMajor>, Eigen::Lower> llt(map);
  if (llt.info() != Eigen::Success) return false;
  // Eigen stops at a pivot <= 0, which a NaN is not; the hand-written factor refused NaN too.
  for (std::size_t i = 0; i < n; ++i)
    if (!(m[i * n + i] > 0) || !std::isfinite(m[i * n + i])) return false;
  return true;
}

std::vector<double> forward_substitute(const std::vector<double>& l, std::size_t n, std::vector<double> b) {
  Eigen::Map<Eigen::VectorXd> x(b.data(), static_cast<Eigen::Index>(n));
  lower(l, n).solveInPlace(x);
  return b;
}

std::vector<double> cholesky_solve(const std::vector<double>& l, std::size_t n, std::vector<double> b) {
  Eigen::Map<Eigen::VectorXd> x(b.data(), static_cast<Eigen::Index>(n));
  const auto factor = lower(l, n);
  factor.solveInPlace(x);
  factor.transpose().solveInPlace(x);
  return b;
}

void forward_substitute_columns(const std::vector<double>& l, std::size_t n, double* b, std::size_t columns) {
  Eigen::Map<Eigen::MatrixXd> x(b, static_cast<Eigen::Index>(n), static_cast<Eigen::Index>(columns));
  lower(l, n).solveInPlace(x);
}

}  // namespace perftune
