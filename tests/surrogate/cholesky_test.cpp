#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "surrogate/transfer/cholesky.h"

using namespace perftune;

namespace {

// A symmetric positive definite system with an integer factor: A = L L^T for
// L = [[2, 0, 0], [6, 1, 0], [-8, 5, 3]], and A x = b for x = (1, -2, 3).
const std::vector<double> kA = {4, 12, -16, 12, 37, -43, -16, -43, 98};
const std::vector<double> kL = {2, 0, 0, 6, 1, 0, -8, 5, 3};
const std::vector<double> kX = {1, -2, 3};
const std::vector<double> kB = {-68, -191, 364};

}  // namespace

TEST_CASE("the Cholesky factor of a known system and the solves with it") {
  std::vector<double> factor = kA;
  REQUIRE(cholesky_factor(factor, 3));
  for (std::size_t i = 0; i < 3; ++i)
    for (std::size_t j = 0; j <= i; ++j) {
      CAPTURE(i, j);
      CHECK(factor[i * 3 + j] == Approx(kL[i * 3 + j]).margin(1e-12));
    }
  // The strict upper triangle is left as it was (the residual reads only the lower one).
  CHECK(factor[1] == 12);
  CHECK(factor[2] == -16);
  CHECK(factor[5] == -43);

  const std::vector<double> x = cholesky_solve(factor, 3, kB);
  for (std::size_t i = 0; i < 3; ++i) CHECK(x[i] == Approx(kX[i]).margin(1e-12));
  // L y = b by forward substitution: y = L^T x.
  const std::vector<double> y = forward_substitute(factor, 3, kB);
  for (std::size_t i = 0; i < 3; ++i) {
    double expected = 0.0;
    for (std::size_t k = 0; k < 3; ++k) expected += kL[k * 3 + i] * kX[k];
    CHECK(y[i] == Approx(expected).margin(1e-12));
  }
  // Several right-hand sides at once, column after column, match one at a time.
  std::vector<double> columns = {-68, -191, 364, 2, 6, -8};  // b, then L's first column (L^-1 of it: e_1)
  forward_substitute_columns(factor, 3, columns.data(), 2);
  for (std::size_t i = 0; i < 3; ++i) CHECK(columns[i] == Approx(y[i]).margin(1e-12));
  CHECK(columns[3] == Approx(1.0).margin(1e-12));
  CHECK(columns[4] == Approx(0.0).margin(1e-12));
  CHECK(columns[5] == Approx(0.0).margin(1e-12));
}

TEST_CASE("a matrix that is not positive definite, or holds a NaN, does not factor") {
  std::vector<double> indefinite = {1, 2, 2, 1};  // eigenvalues 3 and -1
  CHECK_FALSE(cholesky_factor(indefinite, 2));
  std::vector<double> singular = {1, 1, 1, 1};
  CHECK_FALSE(cholesky_factor(singular, 2));
  std::vector<double> nan = {NAN, 0, 0, 1};
  CHECK_FALSE(cholesky_factor(nan, 2));
  std::vector<double> empty;
  CHECK(cholesky_factor(empty, 0));
}
