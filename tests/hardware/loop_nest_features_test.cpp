// Loop-nest features, computed by the Halide worker: each reads what the schedule made of the loop
// nest, and a config the worker cannot lower is a row of missing values, not an error.
#include "hardware/halide/loop_nest_features.h"

#include <cmath>

#include "hardware/halide/halide_schedule.h"
#include "hardware_test_support.h"

namespace perftune {
namespace {

const Kernel& matmul() {
  static const Kernel kernel("mm", program_from_text(R"({"name": "mm", "ops": [
    {"name": "a", "opcode": "parameter", "shape": [64, 48], "parameter_number": 0},
    {"name": "b", "opcode": "parameter", "shape": [48, 96], "parameter_number": 1},
    {"name": "y", "opcode": "dot", "operands": ["a", "b"], "shape": [64, 96], "dot": {"lhs_contracting": [1], "rhs_contracting": [0]}}]})"));
  return kernel;
}

float at(const std::vector<float>& rows, std::size_t row, LoopNestFeature feature) { return rows[row * kLoopNestFeatureCount + feature]; }

TEST_CASE("loop-nest features read parallelism, vectors and unrolling from the lowered schedule", "[hardware][halide]") {
  const SearchSpace space = halide_schedule_space(matmul());
  std::map<std::string, std::int64_t> heuristic = named_knobs(space, heuristic_config(space, matmul()));
  REQUIRE(heuristic.at("vector") > 1);
  std::map<std::string, std::int64_t> serial = heuristic, scalar = heuristic, unrolled = heuristic;
  serial["parallel"] = 0;
  heuristic["parallel"] = 2;  // the two outer tile loops fused: tasks over row and column tiles
  scalar["vector"] = 1;
  heuristic["unroll"] = scalar["unroll"] = serial["unroll"] = 1;
  unrolled["unroll"] = 8;
  unrolled["parallel"] = 2;
  const std::vector<std::map<std::string, std::int64_t>> schedules = {heuristic, serial, scalar, unrolled};

  LoopNestFeaturizer featurizer;
  const std::vector<float> rows = featurizer.rows(matmul().body(), schedules);
  REQUIRE(rows.size() == schedules.size() * kLoopNestFeatureCount);
  for (float value : rows) REQUIRE(std::isfinite(value));
  CHECK(featurizer.failed_rows() == 0);

  CHECK(at(rows, 0, kNestParallelTasks) > 0);  // a parallel loop, found through its closure
  CHECK(at(rows, 0, kNestParallelFraction) > 0.5f);
  CHECK(at(rows, 1, kNestParallelTasks) == 0);
  CHECK(at(rows, 1, kNestParallelFraction) == 0);
  CHECK(at(rows, 0, kNestVectorFraction) > 0.2f);  // scalar index arithmetic counts too
  CHECK(at(rows, 2, kNestVectorFraction) < at(rows, 0, kNestVectorFraction));
  CHECK(at(rows, 2, kNestMaxLanes) < at(rows, 0, kNestMaxLanes));
  CHECK(at(rows, 3, kNestStaticOps) > at(rows, 0, kNestStaticOps));  // unrolling copies the body
  // The same work whatever the schedule: 64 x 96 x 48 multiply-adds, in lanes.
  for (std::size_t r = 0; r < schedules.size(); ++r) CHECK(std::expm1(at(rows, r, kNestLaneOps)) >= 2.0 * 64 * 96 * 48);
}

TEST_CASE("a schedule the worker rejects is a row of missing values and the next lowers", "[hardware][halide]") {
  const SearchSpace space = halide_schedule_space(matmul());
  const std::vector<std::map<std::string, std::int64_t>> schedules = {{{"no_such_knob", 1}},
                                                                      named_knobs(space, heuristic_config(space, matmul()))};
  LoopNestFeaturizer featurizer({.workers = 1});
  const std::vector<float> rows = featurizer.rows(matmul().body(), schedules);
  for (std::size_t i = 0; i < kLoopNestFeatureCount; ++i) CHECK(std::isnan(rows[i]));
  CHECK(std::isfinite(at(rows, 1, kNestLaneOps)));
  CHECK(featurizer.failed_rows() == 1);
}

TEST_CASE("a worker that crashes is restarted for the rest of the batch and serves the next batch", "[hardware]") {
  // A stand-in worker that dies on a request naming "crash" and answers a row of zeros to any other.
  std::string zeros = "0";
  for (std::size_t i = 1; i < kLoopNestFeatureCount; ++i) zeros += ",0";
  const std::string script = "while read -r line; do case \"$line\" in *crash*) kill -SEGV $$;; "
                             "*) echo '{\"status\": \"ok\", \"loop_nest\": [" + zeros + "]}';; esac; done";
  LoopNestFeaturizer featurizer({.runner = {"/bin/sh", "-c", script}, .workers = 2});
  const std::map<std::string, std::int64_t> fine = {{"vector", 8}}, crash = {{"crash", 1}};
  const std::vector<std::map<std::string, std::int64_t>> first = {crash, fine, fine, fine, fine};
  const std::vector<float> rows = featurizer.rows(matmul().body(), first);
  CHECK(std::isnan(at(rows, 0, kNestLaneOps)));
  for (std::size_t r = 1; r < first.size(); ++r) CHECK(at(rows, r, kNestLaneOps) == 0);
  CHECK(featurizer.failed_rows() == 1);
  // A worker restarted by one of the batch's threads would die with that thread, failing the next batch.
  const std::vector<std::map<std::string, std::int64_t>> second(4, fine);
  const std::vector<float> next = featurizer.rows(matmul().body(), second);
  for (std::size_t r = 0; r < second.size(); ++r) CHECK(at(next, r, kNestLaneOps) == 0);
  CHECK(featurizer.failed_rows() == 1);
}

}  // namespace
}  // namespace perftune
