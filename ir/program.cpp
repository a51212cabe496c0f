#include "ir/program.h"

#include <algorithm>
#include <queue>
#include <stdexcept>
#include <unordered_set>

#include "ir/input_error.h"

namespace perftune {

Program::Program(std::string name) : name_(std::move(name)) {}

OpId Program::add_op(Op op, const std::vector<OpId>& operands) {
  const OpId id = boost::add_vertex(std::move(op), graph_);
  for (OpId producer : operands) add_operand(id, producer);
  return id;
}

void Program::add_operand(OpId consumer, OpId producer) {
  if (consumer >= size() || producer >= size())
    throw std::out_of_range("Program::add_operand: op id out of range");
  const int index = static_cast<int>(boost::in_degree(consumer, graph_));
  boost::add_edge(producer, consumer, OperandSlot{index}, graph_);
  edges_.push_back(Edge{producer, consumer, index});
}

std::vector<OpId> Program::operands(OpId id) const {
  std::vector<std::pair<int, OpId>> slots;
  for (auto [it, end] = boost::in_edges(id, graph_); it != end; ++it)
    slots.emplace_back(graph_[*it].index, boost::source(*it, graph_));
  std::sort(slots.begin(), slots.end());
  std::vector<OpId> result;
  result.reserve(slots.size());
  for (const auto& slot : slots) result.push_back(slot.second);
  return result;
}

std::vector<OpId> Program::users(OpId id) const {
  std::vector<OpId> result;
  for (auto [it, end] = boost::out_edges(id, graph_); it != end; ++it)
    result.push_back(boost::target(*it, graph_));
  std::sort(result.begin(), result.end());
  result.erase(std::unique(result.begin(), result.end()), result.end());
  return result;
}

std::optional<OpId> Program::find(std::string_view op_name) const {
  for (OpId id = 0; id < size(); ++id)
    if (graph_[id].name == op_name) return id;
  return std::nullopt;
}

std::vector<OpId> Program::outputs() const {
  std::vector<OpId> result;
  for (OpId id = 0; id < size(); ++id)
    if (boost::out_degree(id, graph_) == 0) result.push_back(id);
  return result;
}

OpId Program::root() const {
  if (root_) return *root_;
  const auto outs = outputs();
  if (outs.empty()) throw std::logic_error("Program '" + name_ + "' has no output op");
  return outs.back();
}

std::vector<OpId> Program::topological_order(const std::string& source) const {
  std::vector<std::size_t> pending(size());
  std::priority_queue<OpId, std::vector<OpId>, std::greater<>> ready;
  for (OpId id = 0; id < size(); ++id) {
    pending[id] = boost::in_degree(id, graph_);
    if (pending[id] == 0) ready.push(id);
  }
  std::vector<OpId> order;
  order.reserve(size());
  while (!ready.empty()) {
    const OpId id = ready.top();
    ready.pop();
    order.push_back(id);
    for (auto [it, end] = boost::out_edges(id, graph_); it != end; ++it)
      if (--pending[boost::target(*it, graph_)] == 0) ready.push(boost::target(*it, graph_));
  }
  if (order.size() != size()) {
    OpId on_cycle = 0;
    while (pending[on_cycle] == 0) ++on_cycle;
    throw InputError(source, "program '" + name_ + "', op '" + graph_[on_cycle].name + "'",
                     "a directed acyclic graph, but this op depends on itself through a cycle");
  }
  return order;
}

namespace {
void collect_computations(const Program& program, std::unordered_set<const Program*>& seen) {
  for (OpId id = 0; id < program.size(); ++id)
    for (const auto& callee : program.op(id).called)
      if (callee && seen.insert(callee.get()).second) collect_computations(*callee, seen);
}
}  // namespace

std::size_t Program::instruction_count_with_called() const {
  std::unordered_set<const Program*> seen;
  collect_computations(*this, seen);
  std::size_t total = size();
  for (const Program* callee : seen) total += callee->size();
  return total;
}

std::size_t Program::computation_count_with_called() const {
  std::unordered_set<const Program*> seen;
  collect_computations(*this, seen);
  return 1 + seen.size();
}

}  // namespace perftune
