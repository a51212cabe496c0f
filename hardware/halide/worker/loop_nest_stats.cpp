#include "hardware/halide/worker/loop_nest_stats.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string>

namespace perftune::halide {

namespace {

using namespace Halide::Internal;
using Halide::Expr;
using Halide::Type;

// Allocations above this size are assumed to go to the heap when Halide is left to choose.
constexpr double kStackBytes = 16384;

class NestWalker : public IRVisitor {
 public:
  explicit NestWalker(const std::map<std::string, Stmt>& functions) : functions_(functions) {}

  std::array<double, kLoopNestFeatureCount> counts{};

  void walk(const Stmt& body) {
    body.accept(this);
    close_loop_body();
  }

 private:
  using IRVisitor::visit;

  const std::map<std::string, Stmt>& functions_;
  double executions_ = 1;  // of the statement being visited
  int parallel_depth_ = 0;
  int body_statements_ = 0;  // in the current loop body, outside nested loops
  bool body_has_loop_ = false;
  std::set<std::string> allocated_;
  Scope<Interval> bounds_;  // constant bounds of the let-bound and loop variables in scope

  // The constant upper bound of `e`, or -1 if it has none.
  double upper_bound(const Expr& e) {
    const Expr bound = find_constant_bound(simplify(e), Direction::Upper, bounds_);
    if (const int64_t* value = as_const_int(bound)) return static_cast<double>(*value);
    return -1;
  }

  double extent_of(const Expr& extent) {
    const double e = upper_bound(extent);
    if (e < 0) {
      counts[kNestUnknownExtents] += 1;
      return 1;
    }
    return std::max(e, 0.0);
  }

  void arithmetic(const Type& type) {
    const int lanes = type.lanes();
    counts[kNestLaneOps] += executions_ * lanes;
    counts[lanes > 1 ? kNestVectorOps : kNestScalarOps] += executions_;
    if (parallel_depth_) counts[kNestParallelOps] += executions_;
    counts[kNestStaticOps] += 1;
    counts[kNestMaxLanes] = std::max(counts[kNestMaxLanes], static_cast<double>(lanes));
    ++body_statements_;
  }

  // Runs `body` `iterations` times more often than the enclosing statement, as one loop body.
  template <typename Body>
  void loop(double iterations, bool parallel, Body body) {
    counts[kNestLoopIterations] += executions_ * iterations;
    const double outer_executions = executions_;
    const int outer_statements = body_statements_;
    executions_ *= iterations;
    parallel_depth_ += parallel;
    body_statements_ = 0;
    body_has_loop_ = false;
    body();
    close_loop_body();
    executions_ = outer_executions;
    parallel_depth_ -= parallel;
    body_statements_ = outer_statements;
    body_has_loop_ = true;  // the enclosing body holds this loop
  }

  void close_loop_body() {
    if (body_has_loop_) return;
    counts[kNestInnermostIterations] += executions_;
    counts[kNestInnermostBodyOps] += executions_ * body_statements_;
  }

#define PERFTUNE_ARITHMETIC(T)     \
  void visit(const T* op) override { \
    arithmetic(op->type);          \
    IRVisitor::visit(op);          \
  }
  PERFTUNE_ARITHMETIC(Add)
  PERFTUNE_ARITHMETIC(Sub)
  PERFTUNE_ARITHMETIC(Mul)
  PERFTUNE_ARITHMETIC(Div)
  PERFTUNE_ARITHMETIC(Mod)
  PERFTUNE_ARITHMETIC(Min)
  PERFTUNE_ARITHMETIC(Max)
  PERFTUNE_ARITHMETIC(Cast)
  PERFTUNE_ARITHMETIC(VectorReduce)
  PERFTUNE_ARITHMETIC(Shuffle)
#undef PERFTUNE_ARITHMETIC

  void visit(const Select* op) override {
    arithmetic(op->type);
    counts[kNestSelects] += executions_;
    IRVisitor::visit(op);
  }

  void visit(const Call* op) override {
    // lower_parallel_tasks turned each parallel loop into a call running a closure function.
    if (op->name == "halide_do_par_for" && op->args.size() >= 3) {
      parallel_for(op);
      return;
    }
    if (op->is_pure() || op->call_type == Call::Extern) arithmetic(op->type);  // math intrinsics
    IRVisitor::visit(op);
  }

  void parallel_for(const Call* op) {
    const double extent = extent_of(op->args[2]);
    count_parallel_loop(extent);
    const Stmt* closure = closure_of(op->args[0]);
    loop(extent, true, [&] {
      if (closure) closure->accept(this);
    });
  }

  void count_parallel_loop(double extent) {
    counts[kNestParallelLaunches] += executions_;
    counts[kNestParallelTasks] += executions_ * extent;
    counts[kNestParallelMaxExtent] = std::max(counts[kNestParallelMaxExtent], extent);
  }

  const Stmt* closure_of(const Expr& function_pointer) {
    struct Names : IRVisitor {
      std::vector<std::string> found;
      using IRVisitor::visit;
      void visit(const Variable* op) override { found.push_back(op->name); }
    } names;
    function_pointer.accept(&names);
    for (std::string name : names.found) {
      name.erase(0, name.find_first_not_of(':'));
      if (const auto it = functions_.find(name); it != functions_.end()) return &it->second;
    }
    return nullptr;
  }

  enum class Access { kDense, kStrided, kGather, kScalar };
  static Access access(const Expr& index, int lanes) {
    if (lanes == 1) return Access::kScalar;
    if (const Ramp* ramp = index.as<Ramp>()) {
      const int64_t* stride = as_const_int(ramp->stride);
      return stride && *stride == 1 ? Access::kDense : Access::kStrided;
    }
    return Access::kGather;
  }

  void visit(const Load* op) override {
    static constexpr LoopNestFeature kinds[] = {kNestDenseLoads, kNestStridedLoads, kNestGatherLoads, kNestScalarLoads};
    counts[kinds[static_cast<int>(access(op->index, op->type.lanes()))]] += executions_;
    const double bytes = executions_ * op->type.bytes();
    counts[kNestLoadBytes] += bytes;
    counts[allocated_.count(op->name) ? kNestInternalLoadBytes : kNestInputLoadBytes] += bytes;
    ++body_statements_;
    IRVisitor::visit(op);
  }

  void visit(const Store* op) override {
    const Access kind = access(op->index, op->value.type().lanes());
    counts[kind == Access::kDense ? kNestDenseStores : kind == Access::kScalar ? kNestScalarStores : kNestOtherStores] += executions_;
    counts[kNestStoreBytes] += executions_ * op->value.type().bytes();
    ++body_statements_;
    IRVisitor::visit(op);
  }

  template <typename LetNode>
  void let(const LetNode* op) {
    op->value.accept(this);
    ScopedBinding<Interval> bind(bounds_, op->name, find_constant_bounds(op->value, bounds_));
    op->body.accept(this);
  }
  void visit(const LetStmt* op) override { let(op); }
  void visit(const Let* op) override { let(op); }

  void visit(const For* op) override {
    op->min.accept(this);
    op->extent.accept(this);
    const double extent = extent_of(op->extent);
    counts[kNestStaticLoops] += 1;
    const bool parallel = op->for_type == ForType::Parallel;  // only before lower_parallel_tasks
    if (parallel) count_parallel_loop(extent);
    Interval range(find_constant_bound(op->min, Direction::Lower, bounds_),
                   find_constant_bound(simplify(op->min + op->extent - 1), Direction::Upper, bounds_));
    ScopedBinding<Interval> bind(bounds_, op->name, range);
    loop(extent, parallel, [&] { op->body.accept(this); });
  }

  void visit(const Allocate* op) override {
    allocated_.insert(op->name);
    double elements = 1;
    for (const Expr& extent : op->extents) elements *= std::max(1.0, upper_bound(extent));
    const double bytes = elements * op->type.bytes();
    counts[kNestAllocations] += executions_;
    counts[kNestMaxAllocationBytes] = std::max(counts[kNestMaxAllocationBytes], bytes);
    counts[kNestAllocatedBytes] += executions_ * bytes;
    if (op->memory_type == Halide::MemoryType::Heap || (op->memory_type == Halide::MemoryType::Auto && bytes > kStackBytes))
      counts[kNestHeapAllocations] += executions_;
    IRVisitor::visit(op);
  }

  void visit(const IfThenElse* op) override {
    counts[kNestBranches] += executions_;
    IRVisitor::visit(op);
  }

  void visit(const ProducerConsumer* op) override {
    if (op->is_producer) counts[kNestProducers] += 1;
    IRVisitor::visit(op);
  }
};

}  // namespace

std::array<float, kLoopNestFeatureCount> loop_nest_stats(const Halide::Module& module, const std::string& entry) {
  std::map<std::string, Stmt> functions;
  for (const Halide::Internal::LoweredFunc& function : module.functions()) functions[function.name] = function.body;
  NestWalker walker(functions);
  if (const auto it = functions.find(entry); it != functions.end()) walker.walk(it->second);
  std::array<double, kLoopNestFeatureCount>& c = walker.counts;
  const double all_ops = std::max(1.0, c[kNestVectorOps] + c[kNestScalarOps]);
  c[kNestOpsPerTask] = c[kNestParallelTasks] > 0 ? c[kNestParallelOps] / c[kNestParallelTasks] : all_ops;
  std::array<float, kLoopNestFeatureCount> row{};
  for (std::size_t i = 0; i < kLoopNestFeatureCount; ++i) row[i] = static_cast<float>(std::log1p(c[i]));
  row[kNestVectorFraction] = static_cast<float>(c[kNestVectorOps] / all_ops);
  row[kNestParallelFraction] = static_cast<float>(c[kNestParallelOps] / all_ops);
  return row;
}

}  // namespace perftune::halide
