#include "hardware/halide/worker/lowering.h"

#include <algorithm>
#include <string>

#include "hardware/reference/elementwise_ops.h"
#include "hardware/reference/op_semantics.h"
#include "hardware/reference/reference_interpreter.h"
#include "ir/fusion.h"

namespace perftune::halide {

namespace {

using Halide::Expr;

[[noreturn]] void unsupported(const Op& op, const std::string& what) {
  throw UnsupportedProgram("op '" + op.name + "' (" + op.opcode + "): " + what + " is not supported by the Halide lowering");
}

// Halide arguments of a program-order index (reversed: innermost first).
std::vector<Expr> halide_args(const std::vector<Expr>& index) { return {index.rbegin(), index.rend()}; }

std::vector<Halide::Var> pure_vars(std::size_t rank) {
  std::vector<Halide::Var> vars;
  for (std::size_t h = 0; h < rank; ++h) vars.push_back(dimension_var(rank, rank - 1 - h));
  return vars;
}

std::vector<Expr> program_index(std::size_t rank) {
  std::vector<Expr> index;
  for (std::size_t d = 0; d < rank; ++d) index.push_back(dimension_var(rank, d));
  return index;
}

// The same comparisons as elementwise_ops.cpp, so NaNs propagate as the reference's do.
Expr elementwise(const Op& op, const std::vector<Expr>& a) {
  const std::string& o = op.opcode;
  const Expr zero = Expr(0.0f), one = Expr(1.0f);
  if (o == "add") return a[0] + a[1];
  if (o == "subtract") return a[0] - a[1];
  if (o == "multiply") return a[0] * a[1];
  if (o == "divide") return a[0] / a[1];
  if (o == "maximum") return Halide::select(a[0] > a[1], a[0], a[1]);
  if (o == "minimum") return Halide::select(a[0] < a[1], a[0], a[1]);
  if (o == "power") return Halide::pow(a[0], a[1]);
  if (o == "negate") return -a[0];
  if (o == "abs") return Halide::abs(a[0]);
  if (o == "exponential") return Halide::exp(a[0]);
  if (o == "exponential-minus-one") return Halide::exp(a[0]) - one;
  if (o == "log") return Halide::log(a[0]);
  if (o == "log-plus-one") return Halide::log(one + a[0]);
  if (o == "sqrt") return Halide::sqrt(a[0]);
  if (o == "rsqrt") return one / Halide::sqrt(a[0]);
  if (o == "tanh") return Halide::tanh(a[0]);
  if (o == "logistic" || o == "sigmoid") return one / (one + Halide::exp(-a[0]));
  if (o == "sine") return Halide::sin(a[0]);
  if (o == "cosine") return Halide::cos(a[0]);
  if (o == "erf") return Halide::erf(a[0]);
  if (o == "floor") return Halide::floor(a[0]);
  if (o == "ceil") return Halide::ceil(a[0]);
  if (o == "sign") return Halide::select(a[0] > zero, one, Halide::select(a[0] < zero, -one, zero));
  if (o == "relu") return Halide::select(a[0] > zero, a[0], zero);
  if (o == "gelu") {
    // tanh form, constants as in elementwise_ops.cpp
    const Expr x = a[0];
    return 0.5f * x * (one + Halide::tanh(0.7978845608f * (x + 0.044715f * x * x * x)));
  }
  if (o == "copy" || o == "convert") return a[0];
  if (o == "clamp") return Halide::select(a[1] < a[0], a[0], Halide::select(a[1] > a[2], a[2], a[1]));
  unsupported(op, "opcode '" + o + "'");
}

// Halide's max / min, not the select the elementwise maximum uses: a select-based update vectorized
// with a guarded tail drops its last lanes in Halide 14 (a max-reduce over 17 columns in vectors
// of 4 left column 16 at its start value); they differ only for NaN operands.
Expr combine(const std::string& opcode, const Expr& acc, const Expr& term) {
  if (opcode == "add") return acc + term;
  if (opcode == "multiply") return acc * term;
  if (opcode == "maximum") return Halide::max(acc, term);
  return Halide::min(acc, term);  // minimum (reducer_identity admits no other)
}

class Lowering {
 public:
  Lowering(const Program& body, const std::map<OpId, Panels>& panels) : body_(body), panels_(panels) {
    check_supported(body);
    lowered_.funcs.resize(body.size());
    const auto parameters = ordered_parameters(body);
    for (OpId id : parameters) {
      const Op& op = body.op(id);
      lowered_.inputs.emplace_back(Halide::Float(32), static_cast<int>(op.shape.dims.size()), "p" + std::to_string(lowered_.inputs.size()));
      lowered_.input_ops.push_back(id);
      input_of_[id] = lowered_.inputs.size() - 1;
    }
    for (OpId id : body.topological_order()) {
      if (body.op(id).is_parameter()) continue;
      lowered_.funcs[id] = Halide::Func("op" + std::to_string(id));
      define(id);
    }
    lowered_.outputs = computed_outputs(body);
  }

  LoweredKernel take() { return std::move(lowered_); }

 private:
  // Value of op `id` at a program-order index.
  Expr call(OpId id, const std::vector<Expr>& index) {
    const auto args = halide_args(index);
    if (const auto it = input_of_.find(id); it != input_of_.end()) return lowered_.inputs[it->second](args);
    return lowered_.funcs[id](args);
  }

  // Op `id` as a Func that is `outside` beyond its shape (for padded windows).
  Halide::Func padded(OpId id, const Expr& outside) {
    const auto& dims = body_.op(id).shape.dims;
    Halide::Region bounds;
    for (std::size_t h = 0; h < dims.size(); ++h) bounds.emplace_back(0, static_cast<int>(dims[dims.size() - 1 - h]));
    if (const auto it = input_of_.find(id); it != input_of_.end())
      return Halide::BoundaryConditions::constant_exterior(lowered_.inputs[it->second], outside, bounds);
    return Halide::BoundaryConditions::constant_exterior(lowered_.funcs[id], outside, bounds);
  }

  void define(OpId id) {
    const Op& op = body_.op(id);
    const std::size_t rank = op.shape.dims.size();
    const auto operands = body_.operands(id);
    Halide::Func& f = lowered_.funcs[id];
    const auto vars = pure_vars(rank);
    const auto index = program_index(rank);
    if (find_elementwise_op(op.opcode)) {
      std::vector<Expr> args;
      for (OpId o : operands) args.push_back(call(o, index));
      f(vars) = elementwise(op, args);
    } else if (op.opcode == "broadcast" || op.opcode == "transpose" || op.opcode == "slice") {
      std::vector<Expr> at;
      for (const AffineIndex& a : structural_index_map(body_, id)) at.push_back(affine(a, index, {}));
      f(vars) = call(operands[0], at);
    } else if (op.opcode == "pad") {
      std::vector<Expr> at;
      for (const AffineIndex& a : structural_index_map(body_, id)) at.push_back(affine(a, index, {}));
      const Expr value = call(operands[1], std::vector<Expr>(body_.op(operands[1]).shape.dims.size(), Expr(0)));
      f(vars) = padded(operands[0], value)(halide_args(at));
    } else if (op.is_constant()) {
      define_constant(op, f, vars);
    } else if (op.opcode == "concatenate") {
      const auto offsets = concat_offsets(body_, id);
      const std::size_t axis = static_cast<std::size_t>(op.dimensions[0]);
      // Innermost operand last: each select picks the operand whose range holds the index.
      std::vector<Expr> at = index;
      at[axis] = Halide::clamp(index[axis] - static_cast<int>(offsets[operands.size() - 1]), 0,
                               static_cast<int>(offsets.back() - offsets[operands.size() - 1] - 1));
      Expr value = call(operands.back(), at);
      for (std::size_t k = operands.size() - 1; k-- > 0;) {
        at[axis] = Halide::clamp(index[axis] - static_cast<int>(offsets[k]), 0, static_cast<int>(offsets[k + 1] - offsets[k] - 1));
        value = Halide::select(index[axis] < static_cast<int>(offsets[k + 1]), call(operands[k], at), value);
      }
      f(vars) = value;
    } else if (op.opcode == "gather") {
      define_gather(id, f, vars, index);
    } else if (is_linear_reshape(op.opcode)) {
      const auto& in_dims = body_.op(operands[0]).shape.dims;
      const auto out_strides = row_major_strides(op.shape.dims), in_strides = row_major_strides(in_dims);
      Expr flat = Expr(0);
      for (std::size_t d = 0; d < rank; ++d) flat = flat + index[d] * static_cast<int>(out_strides[d]);
      std::vector<Expr> at;
      for (std::size_t d = 0; d < in_dims.size(); ++d)
        at.push_back((flat / static_cast<int>(in_strides[d])) % static_cast<int>(std::max<std::int64_t>(in_dims[d], 1)));
      f(vars) = call(operands[0], at);
    } else if (is_reduction_opcode(op.opcode)) {
      define_reduction(id, f, vars, index);
    } else {
      unsupported(op, "opcode '" + op.opcode + "'");
    }
  }

  // operand index of an AffineIndex at a program-order output index and reduction variables.
  static Expr affine(const AffineIndex& a, const std::vector<Expr>& index, const std::vector<Expr>& rvars) {
    Expr e = Expr(static_cast<int>(a.offset));
    if (a.out_dim >= 0) {
      Expr out = index[static_cast<std::size_t>(a.out_dim)];
      if (a.out_divisor != 1) out = out / static_cast<int>(a.out_divisor);
      e = e + out * static_cast<int>(a.out_scale);
    }
    if (a.red_dim >= 0) e = e + rvars[static_cast<std::size_t>(a.red_dim)] * static_cast<int>(a.red_scale);
    return Halide::Internal::simplify(e);
  }

  // A scalar constant is an expression (folded into its consumers); a tensor reads a buffer
  // embedded in the pipeline.
  void define_constant(const Op& op, Halide::Func& f, const std::vector<Halide::Var>& vars) {
    const Literal& values = *op.literal;
    if (op.shape.dims.empty() || std::all_of(values.begin(), values.end(), [&](float v) { return v == values.front() || (v != v && values.front() != values.front()); })) {
      f(vars) = values.empty() ? Expr(0.0f) : Expr(values.front());
      return;
    }
    std::vector<int> extents;
    for (auto it = op.shape.dims.rbegin(); it != op.shape.dims.rend(); ++it) extents.push_back(static_cast<int>(*it));
    Halide::Buffer<float> buffer(extents, op.name.empty() ? "constant" : "c_" + std::to_string(constants_++));
    std::copy(values.begin(), values.end(), buffer.data());  // row-major = Halide's reversed dims, dense
    std::vector<Expr> args(vars.begin(), vars.end());
    f(vars) = buffer(args);
  }

  void define_gather(OpId id, Halide::Func& f, const std::vector<Halide::Var>& vars, const std::vector<Expr>& index) {
    const Op& op = body_.op(id);
    const OpId input = body_.operands(id)[0];
    const std::size_t input_rank = body_.op(input).shape.dims.size();
    const std::size_t axis = static_cast<std::size_t>(op.dimensions[0]);
    const std::size_t index_rank = op.shape.dims.size() + 1 - input_rank;
    const std::vector<std::int64_t> index_dims(op.shape.dims.begin() + static_cast<std::ptrdiff_t>(axis),
                                               op.shape.dims.begin() + static_cast<std::ptrdiff_t>(axis + index_rank));
    Expr which = Expr(0);
    const auto strides = row_major_strides(index_dims);
    for (std::size_t k = 0; k < index_rank; ++k) which = which + index[axis + k] * static_cast<int>(strides[k]);
    Halide::Buffer<int> table(std::max<int>(1, static_cast<int>(op.indices.size())), "g_" + std::to_string(constants_++));
    for (std::size_t i = 0; i < op.indices.size(); ++i) table(static_cast<int>(i)) = static_cast<int>(op.indices[i]);
    std::vector<Expr> at;
    for (std::size_t d = 0; d < axis; ++d) at.push_back(index[d]);
    at.push_back(Halide::clamp(table(which), 0, static_cast<int>(body_.op(input).shape.dims[axis] - 1)));
    for (std::size_t d = axis + 1; d < input_rank; ++d) at.push_back(index[d + index_rank - 1]);
    f(vars) = call(input, at);
  }

  void define_reduction(OpId id, Halide::Func& f, const std::vector<Halide::Var>& vars, const std::vector<Expr>& index) {
    const Op& op = body_.op(id);
    const ReductionForm form = reduction_form(body_, id);
    const auto operands = body_.operands(id);
    const Expr init = form.init_operand >= 0
                          ? call(operands[static_cast<std::size_t>(form.init_operand)],
                                 std::vector<Expr>(body_.op(operands[static_cast<std::size_t>(form.init_operand)]).shape.dims.size(), Expr(0)))
                          : Expr(form.identity);
    f(vars) = init;
    if (form.red_sizes.empty()) unsupported(op, "a reduction over no dimension");
    Halide::Region region;
    for (std::size_t k = form.red_sizes.size(); k-- > 0;) region.emplace_back(0, static_cast<int>(form.red_sizes[k]));
    Halide::RDom r(region, "r" + std::to_string(id) + "_");
    std::vector<Halide::RVar> rvars(form.red_sizes.size());
    for (std::size_t k = 0; k < form.red_sizes.size(); ++k) rvars[k] = r[static_cast<int>(form.red_sizes.size() - 1 - k)];
    lowered_.rvars[id] = rvars;
    // A reduction dimension of extent 1 (a 1x1 window) indexes as 0: left as an RVar it would hide
    // from Halide that the lanes of a packed panel read (index % lanes) are aligned, and a
    // vector load would become a gather.
    std::vector<Expr> reduction_index;
    for (std::size_t k = 0; k < rvars.size(); ++k) reduction_index.push_back(form.red_sizes[k] == 1 ? Expr(0) : Expr(rvars[k]));
    const auto panel = panels_.find(id);
    const auto packed = panel == panels_.end() ? std::nullopt : panel_operand(body_, id, panel->second.dim);
    std::vector<Expr> terms;
    for (std::size_t s = 0; s < form.operands.size(); ++s) {
      std::vector<Expr> at;
      for (const AffineIndex& a : form.operands[s]) at.push_back(affine(a, index, reduction_index));
      if (packed && packed->slot == s) {
        terms.push_back(read_panel(id, operands[s], packed->dim, panel->second.lanes, at));
      } else if (form.bounds_checked[s]) {
        // Outside the operand the reference adds nothing: 0 in a product, the start value otherwise.
        Halide::Func operand = padded(operands[s], form.product ? Expr(0.0f) : init);
        lowered_.padded[id].push_back(operand);
        terms.push_back(operand(halide_args(at)));
      } else {
        terms.push_back(call(operands[s], at));
      }
    }
    const Expr term = form.product ? terms[0] * terms[1] : terms[0];
    if (form.combine == "add") f(vars) += term;
    else if (form.combine == "multiply") f(vars) *= term;
    else f(vars) = combine(form.combine, f(vars), term);
  }

  // Operand `operand` of reduction `id` at program-order index `at`, read through a copy packed
  // into panels of `lanes` along its dimension `dim`: P(lane, other dims innermost first, panel)
  // = operand at dim = panel * lanes + lane (clamped: the last panel repeats the edge).
  Expr read_panel(OpId id, OpId operand, std::size_t dim, int lanes, const std::vector<Expr>& at) {
    const auto& dims = body_.op(operand).shape.dims;
    const Halide::Var lane("pk_lane"), panel("pk_panel");
    std::vector<Halide::Var> args = {lane};
    std::vector<Expr> inside(dims.size()), read = {at[dim] % lanes};
    for (std::size_t d = dims.size(); d-- > 0;) {
      if (d == dim) continue;
      const Halide::Var v("pk_d" + std::to_string(d));
      args.push_back(v);
      inside[d] = v;
      read.push_back(at[d]);
    }
    args.push_back(panel);
    read.push_back(at[dim] / lanes);
    inside[dim] = Halide::min(panel * lanes + lane, static_cast<int>(dims[dim] - 1));
    Halide::Func packed("op" + std::to_string(id) + "_panel");
    packed(args) = call(operand, inside);
    lowered_.panels[id] = packed;
    return packed(read);
  }

  const Program& body_;
  const std::map<OpId, Panels>& panels_;
  LoweredKernel lowered_;
  std::map<OpId, std::size_t> input_of_;
  int constants_ = 0;
};

}  // namespace

Halide::Var dimension_var(std::size_t rank, std::size_t d) {
  // Named by distance from the innermost dimension, so every Func's innermost variable is "d0".
  return Halide::Var("d" + std::to_string(rank - 1 - d));
}

LoweredKernel lower(const Program& body, const std::map<OpId, Panels>& panels) { return Lowering(body, panels).take(); }

void set_shape_estimates(LoweredKernel& lowered, const Program& body, const std::vector<Halide::Func>& outputs) {
  const auto region_of = [](const std::vector<std::int64_t>& dims) {
    Halide::Region region;
    for (std::size_t h = 0; h < dims.size(); ++h) region.emplace_back(0, static_cast<int>(dims[dims.size() - 1 - h]));
    return region;
  };
  for (std::size_t i = 0; i < lowered.inputs.size(); ++i) lowered.inputs[i].set_estimates(region_of(body.op(lowered.input_ops[i]).shape.dims));
  for (std::size_t o = 0; o < outputs.size(); ++o) {
    Halide::Func f = outputs[o];
    f.set_estimates(region_of(body.op(lowered.outputs[o]).shape.dims));
  }
}

}  // namespace perftune::halide
