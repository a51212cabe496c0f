#pragma once
// A tensor program: a DAG of ops stored in a Boost.Graph bidirectional adjacency list, so both
// operands (in-edges) and users (out-edges) are cheap to walk, as GraphSAGE needs both directions.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/graph/adjacency_list.hpp>

#include "ir/op.h"

namespace perftune {

using OpId = std::size_t;

// A producer -> consumer edge; `operand_index` is the consumer's operand slot.
struct Edge {
  OpId producer;
  OpId consumer;
  int operand_index;
};

class Program {
 public:
  struct OperandSlot {
    int index = 0;
  };
  using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::bidirectionalS, Op, OperandSlot>;

  explicit Program(std::string name = "");

  const std::string& name() const { return name_; }
  void set_name(std::string name) { name_ = std::move(name); }

  // Adds an op whose operands (ids already in the program, repeats allowed) are given in order.
  OpId add_op(Op op, const std::vector<OpId>& operands = {});
  // Appends one more operand to `consumer`. Importers with forward references use it; it can
  // create a cycle, which check_acyclic() reports.
  void add_operand(OpId consumer, OpId producer);

  std::size_t size() const { return boost::num_vertices(graph_); }
  bool empty() const { return size() == 0; }
  const Op& op(OpId id) const { return graph_[id]; }
  Op& mutable_op(OpId id) { return graph_[id]; }
  std::vector<OpId> operands(OpId id) const;  // in operand order
  std::vector<OpId> users(OpId id) const;     // distinct, ascending
  // Every edge, in insertion order: an edge's index here is its stable id (FusionConfig uses it).
  const std::vector<Edge>& edges() const { return edges_; }
  std::optional<OpId> find(std::string_view op_name) const;
  // Ops without users, ascending.
  std::vector<OpId> outputs() const;
  // The op whose value the program returns: set explicitly, else the last output.
  OpId root() const;
  void set_root(OpId id) { root_ = id; }

  // Deterministic topological order (Kahn, ties by id). Throws InputError naming an op on a
  // cycle; `source` names the file the program came from.
  std::vector<OpId> topological_order(const std::string& source = "") const;
  void check_acyclic(const std::string& source = "") const { (void)topological_order(source); }

  // Instructions and computations including called computations, each distinct one once.
  std::size_t instruction_count_with_called() const;
  std::size_t computation_count_with_called() const;

  const Graph& graph() const { return graph_; }

 private:
  std::string name_;
  Graph graph_;
  std::vector<Edge> edges_;
  std::optional<OpId> root_;
};

}  // namespace perftune
