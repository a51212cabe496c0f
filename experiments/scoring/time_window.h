#pragma once
// Where the time-axis score (time_axis_score.h) is taken: from the tuning time random search needs
// to get `start` of the way from a space's median valid runtime to its optimum to the time it
// needs for `end` (Kernel Tuner's methodology: cutoff_percentile_start and cutoff_percentile).
#include <sstream>
#include <string>
#include <vector>

namespace perftune {

struct TimeWindow {
  double start = 0.5;  // 0 <= start < end <= 1
  double end = 0.96;

  std::string label() const {  // "0.5-0.96": the key of the window's scores in summary.json
    std::ostringstream out;
    out << start << "-" << end;
    return out.str();
  }
};

// What an experiment scores when it names no windows: the two settings of the methodology's
// published comparisons (the second nearly the whole way from a random config to the optimum).
inline std::vector<TimeWindow> default_time_windows() { return {{0.5, 0.96}, {0.01, 0.95}}; }

}  // namespace perftune
