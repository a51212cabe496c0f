#include "autotuner/network/task_scheduler.h"

#include <catch2/catch.hpp>

namespace perftune {
namespace {

TaskProgress task(double instances, std::vector<std::optional<double>> best_after_round, double spent) {
  TaskProgress progress;
  progress.instances = instances;
  progress.best_after_round = std::move(best_after_round);
  progress.spent = spent;
  return progress;
}

TEST_CASE("every kernel gets its first round before any kernel gets a second") {
  const Allocation allocation = GENERATE(Allocation::kGradient, Allocation::kEqual);
  std::vector<TaskProgress> tasks = {task(1, {1e-3}, 1), task(1, {}, 0), task(5, {}, 0)};
  REQUIRE(next_task(allocation, tasks) == 1u);
  tasks[1] = task(1, {2e-3}, 1);
  REQUIRE(next_task(allocation, tasks) == 2u);
}

TEST_CASE("equal allocation is round robin over the kernels not finished") {
  std::vector<TaskProgress> tasks = {task(1, {1e-3, 1e-3}, 2), task(9, {1.0, 0.5}, 2), task(1, {1e-3}, 1)};
  REQUIRE(next_task(Allocation::kEqual, tasks) == 2u);
  tasks[2].finished = true;
  REQUIRE(next_task(Allocation::kEqual, tasks) == 0u);
  for (TaskProgress& t : tasks) t.finished = true;
  REQUIRE_FALSE(next_task(Allocation::kEqual, tasks));
}

TEST_CASE("gradient allocation favours the kernel with the larger share of the network's time") {
  // Same curve, but the second kernel appears four times in the network.
  std::vector<TaskProgress> tasks = {task(1, {2e-3, 1.8e-3}, 16), task(4, {2e-3, 1.8e-3}, 16)};
  REQUIRE(next_task(Allocation::kGradient, tasks) == 1u);
  // A slow kernel beats a fast one that appears as often.
  tasks = {task(1, {2e-3, 1.8e-3}, 16), task(1, {2e-4, 1.8e-4}, 16)};
  REQUIRE(next_task(Allocation::kGradient, tasks) == 0u);
}

TEST_CASE("gradient allocation favours a still-falling curve over a flat one, per unit of budget") {
  const TaskProgress flat = task(1, {1e-3, 1e-3, 1e-3, 1e-3, 1e-3}, 40);
  const TaskProgress falling = task(1, {2e-3, 1.6e-3, 1.3e-3, 1.1e-3, 1e-3}, 40);
  REQUIRE(expected_gain(falling) > expected_gain(flat));
  REQUIRE(next_task(Allocation::kGradient, {flat, falling}) == 1u);
  // The same curve bought with twice the budget per round is worth half as much.
  REQUIRE(expected_gain(task(1, {2e-3, 1.6e-3}, 32)) == Approx(expected_gain(task(1, {2e-3, 1.6e-3}, 16)) / 2));
}

TEST_CASE("a kernel with nothing that ran gains nothing, and unknown allocations are refused") {
  REQUIRE(expected_gain(task(3, {std::nullopt, std::nullopt}, 16)) == 0.0);
  REQUIRE(parse_allocation("equal") == Allocation::kEqual);
  REQUIRE_THROWS_WITH(parse_allocation("fair"), Catch::Contains("\"gradient\" or \"equal\""));
}

}  // namespace
}  // namespace perftune
