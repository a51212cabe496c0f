#pragma once
// Operator fusion: which producer -> consumer edges of a program are fused. The connected fused
// groups become kernels; the program's runtime is the sum of its kernels' runtimes.
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "ir/kernel.h"

namespace perftune {

// One flag per edge of the program, indexed like Program::edges(); true = fused.
struct FusionConfig {
  std::vector<bool> fused;

  static FusionConfig none(const Program& program);
  // Fuse every fusible edge whose consumer is elementwise (XLA's first, greedy pass). The
  // result is made legal by dropping edges that would close a cycle.
  static FusionConfig greedy_elementwise(const Program& program);
  bool operator==(const FusionConfig&) const = default;
};

class FusionError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A kernel of a fused program and where its tensors live in the program.
struct FusedKernel {
  Kernel kernel;
  std::vector<OpId> members;  // program ops computed by this kernel, topological order
  std::vector<OpId> inputs;   // program ops feeding the kernel's parameters, in parameter order
  std::vector<OpId> outputs;  // program ops the kernel writes out (used outside it, or final)
};

struct FusionPlan {
  std::vector<FusedKernel> kernels;  // in an order that respects data dependences
  std::vector<int> kernel_of_op;     // -1 for program parameters and constants (not work)
};

// Parameters are inputs and constants are copied into each kernel that reads them: edges from
// either are never fused; every other edge may be.
bool is_fusible(const Program& program, const Edge& edge);
bool is_elementwise_opcode(const std::string& opcode);
// Edge ids (indices into Program::edges()) that a FusionConfig may set.
std::vector<std::size_t> fusible_edges(const Program& program);

// Group id of each op (-1 for parameters and constants) from union-find over the fused edges.
std::vector<int> fusion_groups(const Program& program, const FusionConfig& config);
// Empty when the grouped graph is acyclic; else a description of the cycle.
std::optional<std::string> fusion_cycle(const Program& program, const std::vector<int>& groups);
// The groups in the order partition() emits their kernels (data dependences respected, ties by
// group id); nullopt on a cycle. Lets a caller that memoizes kernels sum them in partition's order.
std::optional<std::vector<int>> fusion_group_order(const Program& program, const std::vector<int>& groups);
bool is_legal(const Program& program, const FusionConfig& config);

// The kernel of one group of `groups` (fusion_groups()) as partition() builds it; `members` are the
// group's ops in the program's topological order (not empty).
FusedKernel fused_kernel(const Program& program, const std::vector<int>& groups, std::vector<OpId> members);

// Partitions the program into kernels. Throws FusionError if the config has the wrong length,
// fuses a parameter edge, or its kernels would form a cycle.
FusionPlan partition(const Program& program, const FusionConfig& config);

}  // namespace perftune
