#include "hardware/halide/worker/schedule_source.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>

namespace perftune::halide {

namespace {

using Halide::Internal::Function;

constexpr std::pair<Halide::TailStrategy, const char*> kTails[] = {
    {Halide::TailStrategy::RoundUp, "RoundUp"},           {Halide::TailStrategy::GuardWithIf, "GuardWithIf"},
    {Halide::TailStrategy::Predicate, "Predicate"},       {Halide::TailStrategy::PredicateLoads, "PredicateLoads"},
    {Halide::TailStrategy::PredicateStores, "PredicateStores"}, {Halide::TailStrategy::ShiftInwards, "ShiftInwards"},
    {Halide::TailStrategy::Auto, "Auto"}};

std::string tail_name(Halide::TailStrategy tail) {
  for (const auto& [value, name] : kTails)
    if (value == tail) return name;
  throw std::runtime_error("a tail strategy this reader does not know");
}

Halide::TailStrategy tail_value(const std::string& name) {
  for (const auto& [value, known] : kTails)
    if (name == known) return value;
  throw std::runtime_error("tail strategy " + name + " is not Halide's");
}

std::string expr_text(const Halide::Expr& e) {
  const std::int64_t* value = Halide::Internal::as_const_int(e);
  if (!value) {
    std::ostringstream out;
    out << e;
    throw std::runtime_error("a schedule with a non-constant size (" + out.str() + ")");
  }
  return std::to_string(*value);
}

// A Func's name without the "$N" Halide appends when a process defines a second Func of that name:
// what names it across pipelines of the same algorithm.
std::string base_name(const std::string& name) { return name.substr(0, name.find('$')); }

// Every Func of the pipeline by name, wrappers included.
std::map<std::string, Function> pipeline_env(const Halide::Pipeline& pipeline) {
  std::map<std::string, Function> env;
  for (const Halide::Func& output : pipeline.outputs())
    for (const auto& [name, f] : Halide::Internal::find_transitive_calls(output.function())) env.emplace(name, f);
  for (bool grew = true; grew;) {
    grew = false;
    for (const auto& [name, f] : std::map<std::string, Function>(env))
      for (const auto& [caller, wrapper] : f.schedule().wrappers())
        for (const auto& [n, g] : Halide::Internal::find_transitive_calls(Function(wrapper)))
          grew |= env.emplace(n, g).second;
  }
  return env;
}

// A loop variable's name as a scheduling call takes it: Halide records a split's loops qualified by
// the loop they split ("x.xo", "x.v1" for vectorize(x, n)) and matches an unqualified name by suffix.
std::string loop_name(const std::string& name) { return name.substr(name.rfind('.') + 1); }

// `level` must be locked.
void add_level(std::vector<ScheduleDirective>& out, const std::string& func, const Halide::LoopLevel& level, const std::string& kind) {
  if (level.is_inlined()) return;
  ScheduleDirective d{func, -1, kind + (level.is_root() ? "_root" : "_at")};
  if (!level.is_root()) {
    d.at = base_name(level.func());
    d.vars = {loop_name(level.var().name())};
    d.rvars = {level.var().is_rvar};
  }
  out.push_back(std::move(d));
}

// `args`: the Func's pure arguments, whose order (after the stage's reduction variables) is the
// loop order of a stage nothing was asked of.
void add_stage(std::vector<ScheduleDirective>& out, const std::string& func, int stage, const Halide::Internal::StageSchedule& schedule,
               const std::vector<std::string>& args) {
  std::set<std::string> rvars;
  for (const auto& r : schedule.rvars()) rvars.insert(r.var);
  auto directive = [&](const std::string& call, std::vector<std::string> vars) {
    ScheduleDirective d{func, stage, call};
    for (const std::string& v : vars) {
      d.rvars.push_back(rvars.count(v) > 0);
      d.vars.push_back(loop_name(v));
    }
    return d;
  };
  for (const Halide::Internal::Split& split : schedule.splits()) {
    if (split.is_split()) {
      if (rvars.count(split.old_var)) rvars.insert({split.outer, split.inner});
      ScheduleDirective d = directive("split", {split.old_var, split.outer, split.inner});
      d.exprs = {expr_text(split.factor)};
      d.tail = tail_name(split.tail);
      out.push_back(std::move(d));
    } else if (split.is_fuse()) {
      if (rvars.count(split.inner) || rvars.count(split.outer)) rvars.insert(split.old_var);
      out.push_back(directive("fuse", {split.inner, split.outer, split.old_var}));
    } else if (split.is_rename()) {
      if (rvars.count(split.old_var)) rvars.insert(split.outer);
      out.push_back(directive("rename", {split.old_var, split.outer}));
    } else {
      throw std::runtime_error("Func " + func + ": a purified RVar, which this reader does not write");
    }
  }
  std::vector<std::string> order;
  for (const Halide::Internal::Dim& dim : schedule.dims()) {
    if (dim.var == Halide::Var::outermost().name()) continue;
    if (dim.is_rvar()) rvars.insert(dim.var);
    order.push_back(dim.var);
  }
  std::vector<std::string> unscheduled;
  for (const auto& r : schedule.rvars()) unscheduled.push_back(r.var);
  unscheduled.insert(unscheduled.end(), args.begin(), args.end());
  if (order.size() > 1 && (!schedule.splits().empty() || order != unscheduled)) out.push_back(directive("reorder", order));
  for (const Halide::Internal::Dim& dim : schedule.dims()) {
    if (dim.for_type == Halide::Internal::ForType::Parallel) out.push_back(directive("parallel", {dim.var}));
    if (dim.for_type == Halide::Internal::ForType::Vectorized) out.push_back(directive("vectorize", {dim.var}));
    if (dim.for_type == Halide::Internal::ForType::Unrolled) out.push_back(directive("unroll", {dim.var}));
  }
}

std::string identifier(const std::string& name) {
  std::string out = "f_";
  for (char c : name) out += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return out;
}

std::string var_text(const ScheduleDirective& d, std::size_t i) {
  return std::string(d.rvars[i] ? "RVar(\"" : "Var(\"") + d.vars[i] + "\")";
}

}  // namespace

std::vector<ScheduleDirective> schedule_directives(const Halide::Pipeline& pipeline) {
  const std::map<std::string, Function> env = pipeline_env(pipeline);
  std::vector<Function> outputs;
  for (const Halide::Func& output : pipeline.outputs()) outputs.push_back(output.function());
  std::vector<ScheduleDirective> out;
  // Wrappers first: a producer may be computed inside a wrapper's loops.
  for (const std::string& name : Halide::Internal::topological_order(outputs, std::map<std::string, Function>(env)))
    for (const auto& [caller, wrapper] : env.at(name).schedule().wrappers()) {
      if (!caller.empty()) throw std::runtime_error("Func " + name + ": a wrapper for one caller, which this reader does not write");
      out.push_back(ScheduleDirective{base_name(Function(wrapper).name()), -1, "wrap", {}, {}, {}, base_name(name)});
    }
  // Producers first; a Func the order leaves out (a wrapper nothing calls by name) after them.
  std::vector<std::string> order = Halide::Internal::topological_order(outputs, std::map<std::string, Function>(env));
  for (const auto& [name, f] : env)
    if (std::find(order.begin(), order.end(), name) == order.end()) order.push_back(name);
  for (const std::string& name : order) {
    const Function& f = env.at(name);
    const Halide::Internal::FuncSchedule& schedule = f.schedule();
    const std::string base = base_name(name);
    // Read only locked (Halide locks a schedule's levels when it lowers; these copies share them).
    Halide::LoopLevel compute = schedule.compute_level(), store = schedule.store_level();
    compute.lock();
    store.lock();
    add_level(out, base, compute, "compute");
    if (store.to_string() != compute.to_string()) add_level(out, base, store, "store");
    for (const Halide::Internal::Bound& bound : schedule.bounds()) {
      if (!bound.min.defined() || !bound.extent.defined()) throw std::runtime_error("Func " + name + ": a bound without a min");
      out.push_back(ScheduleDirective{base, -1, "bound", {bound.var}, {false}, {expr_text(bound.min), expr_text(bound.extent)}});
    }
    std::vector<std::string> storage;
    for (const auto& dim : schedule.storage_dims()) storage.push_back(dim.var);
    if (storage != f.args()) out.push_back(ScheduleDirective{base, -1, "reorder_storage", storage, std::vector<bool>(storage.size(), false)});
    if (f.has_pure_definition()) add_stage(out, base, 0, f.definition().schedule(), f.args());
    for (std::size_t u = 0; u < f.updates().size(); ++u) add_stage(out, base, static_cast<int>(u) + 1, f.updates()[u].schedule(), f.args());
  }
  return out;
}

std::string schedule_source(const std::vector<ScheduleDirective>& directives, const std::string& name) {
  std::ostringstream out;
  out << "inline void apply_schedule_" << name << "(::Halide::Pipeline pipeline, ::Halide::Target target) {\n"
      << "  using ::Halide::Func;\n  using ::Halide::RVar;\n  using ::Halide::TailStrategy;\n  using ::Halide::Var;\n  (void)target;\n"
      << "  // Every Func of the pipeline, by name (without the \"$N\" of a second Func of a name in one process).\n"
      << "  std::map<std::string, Func> funcs;\n  for (const Func &output : pipeline.outputs())\n"
      << "    for (const auto &called : ::Halide::Internal::find_transitive_calls(output.function()))\n"
      << "      funcs.emplace(called.first.substr(0, called.first.find('$')), Func(called.second));\n";
  // Every Func named, declared first: a producer is computed inside its consumer's loops.
  std::set<std::string> declared, wrappers;
  for (const ScheduleDirective& d : directives)
    if (d.call == "wrap") wrappers.insert(d.func);
  auto declare = [&](const std::string& f) {
    if (!f.empty() && !wrappers.count(f) && declared.insert(f).second) out << "  Func " << identifier(f) << " = funcs.at(\"" << f << "\");\n";
  };
  for (const ScheduleDirective& d : directives) {
    declare(d.func);
    declare(d.at);
  }
  for (const ScheduleDirective& d : directives)
    if (d.call == "wrap") out << "  Func " << identifier(d.func) << " = " << identifier(d.at) << ".in();\n";
  auto func = [](const std::string& f) { return identifier(f); };
  for (const ScheduleDirective& d : directives) {
    if (d.call == "wrap") continue;
    const std::string f = func(d.func);
    const std::string stage = d.stage > 0 ? f + ".update(" + std::to_string(d.stage - 1) + ")" : f;
    out << "  " << stage << "." << d.call << "(";
    if (d.call == "compute_at" || d.call == "store_at") out << func(d.at) << ", " << var_text(d, 0);
    else if (d.call == "bound") out << var_text(d, 0) << ", " << d.exprs[0] << ", " << d.exprs[1];
    else if (d.call == "split") out << var_text(d, 0) << ", " << var_text(d, 1) << ", " << var_text(d, 2) << ", " << d.exprs[0] << ", TailStrategy::" << d.tail;
    else if (d.call == "reorder" || d.call == "reorder_storage") {
      out << "{";
      for (std::size_t i = 0; i < d.vars.size(); ++i) out << (i ? ", " : "") << var_text(d, i);
      out << "}";
    } else {
      for (std::size_t i = 0; i < d.vars.size(); ++i) out << (i ? ", " : "") << var_text(d, i);
    }
    out << ");\n";
  }
  out << "}\n";
  return out.str();
}

void apply_directives(const std::vector<ScheduleDirective>& directives, const Halide::Pipeline& pipeline) {
  std::map<std::string, Halide::Func> funcs;
  for (const auto& [name, f] : pipeline_env(pipeline)) funcs.emplace(base_name(name), Halide::Func(f));
  auto func = [&](const std::string& name) {
    const auto it = funcs.find(name);
    if (it == funcs.end()) {
      std::string known;
      for (const auto& [n, f] : funcs) known += " " + n;
      throw std::runtime_error("the pipeline has no Func " + name + " (it has" + known + ")");
    }
    return it->second;
  };
  for (const ScheduleDirective& d : directives) {
    if (d.call == "wrap") {
      funcs[d.func] = func(d.at).in();
      continue;
    }
    Halide::Func f = func(d.func);
    auto v = [&](std::size_t i) { return Halide::VarOrRVar(d.vars[i], d.rvars[i]); };
    auto n = [&](std::size_t i) { return static_cast<int>(std::stoll(d.exprs[i])); };
    if (d.stage < 0) {
      if (d.call == "compute_root") f.compute_root();
      else if (d.call == "store_root") f.store_root();
      else if (d.call == "compute_at") f.compute_at(Halide::LoopLevel(func(d.at), v(0)));
      else if (d.call == "store_at") f.store_at(Halide::LoopLevel(func(d.at), v(0)));
      else if (d.call == "bound") f.bound(Halide::Var(d.vars[0]), n(0), n(1));
      else if (d.call == "reorder_storage") {
        std::vector<Halide::Var> vars;
        for (const std::string& name : d.vars) vars.emplace_back(name);
        f.reorder_storage(vars);
      } else {
        throw std::runtime_error("unknown Func directive " + d.call);
      }
      continue;
    }
    Halide::Stage s = d.stage == 0 ? static_cast<Halide::Stage>(f) : f.update(d.stage - 1);
    if (d.call == "split") s.split(v(0), v(1), v(2), n(0), tail_value(d.tail));
    else if (d.call == "fuse") s.fuse(v(0), v(1), v(2));
    else if (d.call == "rename") s.rename(v(0), v(1));
    else if (d.call == "reorder") {
      std::vector<Halide::VarOrRVar> vars;
      for (std::size_t i = 0; i < d.vars.size(); ++i) vars.push_back(v(i));
      s.reorder(vars);
    } else if (d.call == "parallel") s.parallel(v(0));
    else if (d.call == "vectorize") s.vectorize(v(0));
    else if (d.call == "unroll") s.unroll(v(0));
    else throw std::runtime_error("unknown stage directive " + d.call);
  }
}

}  // namespace perftune::halide
