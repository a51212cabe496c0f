#pragma once
// What the tree model learns from one kernel's runtimes, per objective (TreeParams::objective).
#include <span>
#include <string>
#include <vector>

namespace perftune {

// rank:pairwise scores faster configs higher; a regression predicts (centred) log seconds.
bool higher_is_faster(const std::string& objective);

// One label per runtime of a kernel: for rank:pairwise a relevance grade from 0 (slowest) to 10
// (fastest) by rank, ties sharing the lower rank; otherwise log seconds minus their mean over the
// kernel (configs of different kernels are never compared, so each kernel's level is noise).
std::vector<float> tree_labels(const std::string& objective, std::span<const double> seconds);

}  // namespace perftune
