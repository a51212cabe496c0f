#include "autotuner/network/task_scheduler.h"

#include <algorithm>
#include <stdexcept>

namespace perftune {

namespace {

constexpr double kBackwardWeight = 0.2;    // Ansor's alpha
constexpr std::size_t kBackwardWindow = 3;  // Ansor's backward_window_size

}  // namespace

Allocation parse_allocation(const std::string& name) {
  if (name == "gradient") return Allocation::kGradient;
  if (name == "equal") return Allocation::kEqual;
  throw std::invalid_argument("allocation \"" + name + "\": expected \"gradient\" or \"equal\"");
}

std::string allocation_name(Allocation allocation) { return allocation == Allocation::kGradient ? "gradient" : "equal"; }

double expected_gain(const TaskProgress& task) {
  const std::size_t rounds = task.best_after_round.size();
  if (rounds == 0 || !task.best_after_round.back()) return 0.0;
  const double best = *task.best_after_round.back();
  double backward = 0.0;
  if (rounds > kBackwardWindow)
    if (const auto earlier = task.best_after_round[rounds - 1 - kBackwardWindow])
      backward = (*earlier - best) / static_cast<double>(kBackwardWindow);
  const double forward = best / static_cast<double>(rounds);
  const double per_round = task.spent > 0 ? task.spent / static_cast<double>(rounds) : 1.0;
  return task.instances * (kBackwardWeight * backward + (1 - kBackwardWeight) * forward) / per_round;
}

std::optional<std::size_t> next_task(Allocation allocation, const std::vector<TaskProgress>& tasks) {
  std::optional<std::size_t> chosen;
  // Warm-up (both policies): every task's first round before anyone's second. Round robin then
  // keeps giving the task with the fewest rounds.
  std::size_t fewest = SIZE_MAX;
  for (std::size_t i = 0; i < tasks.size(); ++i)
    if (!tasks[i].finished && tasks[i].best_after_round.size() < fewest) {
      fewest = tasks[i].best_after_round.size();
      chosen = i;
    }
  if (!chosen || allocation == Allocation::kEqual || fewest == 0) return chosen;
  double best_gain = -1.0;
  for (std::size_t i = 0; i < tasks.size(); ++i) {
    if (tasks[i].finished) continue;
    const double gain = expected_gain(tasks[i]);
    if (gain > best_gain) {
      best_gain = gain;
      chosen = i;
    }
  }
  return chosen;
}

}  // namespace perftune
