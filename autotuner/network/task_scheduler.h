#pragma once
// How one budget is shared among a network's kernels: which kernel gets the next round.
//
// "gradient" follows Ansor's task scheduler (Zheng et al., OSDI 2020, section 6): after one warm-up
// round each, the next round goes to the kernel whose next round is expected to cut the network's
// latency most per unit of budget. For kernel i with best time g_i after r_i rounds, appearing w_i
// times in the network:
//   backward_i = (g_i(r_i - W) - g_i(r_i)) / W        (its recent improvement per round, W = 3)
//   forward_i  = g_i / r_i                            (optimistic: another round gains its mean so far)
//   gain_i     = w_i * (alpha * backward_i + (1 - alpha) * forward_i) / cost_i,   alpha = 0.2
// where cost_i is the budget one of its rounds spends (its measurements, or its seconds when the
// budget is time). A kernel that is a large share of the network and still improving gets more;
// one whose curve is flat, or that is cheap in the network, gets less. "equal" is round robin.
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace perftune {

enum class Allocation { kGradient, kEqual };

// "gradient" or "equal"; throws std::invalid_argument otherwise.
Allocation parse_allocation(const std::string& name);
std::string allocation_name(Allocation allocation);

struct TaskProgress {
  double instances = 1;                 // times the kernel appears in the network
  // The kernel's best time after each of its rounds (nullopt while nothing it ran succeeded).
  std::vector<std::optional<double>> best_after_round;
  double spent = 0;                     // budget its rounds used (measurements or seconds)
  bool finished = false;                // its space is used up, or it cannot run
};

// The task that gets the next round, nullopt when every task is finished. Ties go to the lower
// index, so the choice is deterministic.
std::optional<std::size_t> next_task(Allocation allocation, const std::vector<TaskProgress>& tasks);

// The expected gain per unit of budget of `task`'s next round (the formula above); for tests and
// the progress log.
double expected_gain(const TaskProgress& task);

}  // namespace perftune
