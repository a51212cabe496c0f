#pragma once
// The Gaussian process's dense linear algebra (surrogate/transfer/target_residual.h): the lower Cholesky
// factor of a symmetric positive definite matrix and the solves with it, done by Eigen's blocked,
// vectorized LLT and triangular solves rather than by hand-written loops (bench/residual_bench
// measures the difference). Matrices are row-major n x n std::vector<double>, as the residual
// keeps them; Eigen stays out of this header, so its users need not parse it.
#include <cstddef>
#include <vector>

namespace perftune {

// Overwrites the lower triangle of the symmetric n x n row-major `m` (the diagonal included) with
// its lower Cholesky factor L (m = L L^T); the strict upper triangle is left as it was. False when
// `m` is not positive definite (or holds a NaN); `m` is then unspecified.
bool cholesky_factor(std::vector<double>& m, std::size_t n);

// L^-1 b (forward substitution) for a factor of cholesky_factor().
std::vector<double> forward_substitute(const std::vector<double>& l, std::size_t n, std::vector<double> b);

// (L L^T)^-1 b for a factor of cholesky_factor().
std::vector<double> cholesky_solve(const std::vector<double>& l, std::size_t n, std::vector<double> b);

// L^-1 B in place for `columns` right-hand sides stored one after the other (B is n x columns,
// column-major): one blocked triangular solve instead of one forward substitution per column.
void forward_substitute_columns(const std::vector<double>& l, std::size_t n, double* b, std::size_t columns);

}  // namespace perftune
