#include "hardware/cpu_codegen.h"

#include <algorithm>
#include <limits>
#include <map>
#include <set>
#include <sstream>

#include "hardware/cpu_tile_space.h"
#include "hardware/elementwise_ops.h"
#include "hardware/fusion_space.h"
#include "hardware/op_semantics.h"
#include "hardware/reference_interpreter.h"
#include "ir/fusion.h"
#include "ir/knob_roles.h"

namespace perftune {

namespace {

using Index = std::vector<std::string>;  // one C++ expression per dimension

std::string join(const Index& index) {
  std::string out;
  for (const auto& s : index) out += s + ",";
  return out;
}

std::string float_literal(float value) {
  if (value == std::numeric_limits<float>::infinity()) return "__builtin_inff()";
  if (value == -std::numeric_limits<float>::infinity()) return "(-__builtin_inff())";
  std::ostringstream out;
  out.precision(9);
  out << value << "f";
  std::string s = out.str();
  if (s.find('.') == std::string::npos && s.find('e') == std::string::npos) s.insert(s.size() - 1, ".0");
  return s;
}

// A block of statements being emitted, with the values already computed in it (common
// subexpressions are computed once per scope, so a diamond of inlined ops is not re-expanded).
struct Scope {
  std::string code;
  std::map<std::string, std::string> known;
  int indent = 0;
  void line(const std::string& text) { code += std::string(static_cast<std::size_t>(indent) * 2, ' ') + text + "\n"; }
};

// One fused group: which ops it computes and which of them are written to buffers.
struct Group {
  std::vector<OpId> members;
  std::vector<OpId> outputs;  // materialized, topological order
  OpId tiled = 0;             // the output whose nest uses `tiles`
  TileChoice tiles;
};

class Generator {
 public:
  Generator(const Program& program, const std::vector<int>& buffer_of, const std::vector<bool>& inlined)
      : program_(program), buffer_of_(buffer_of), inlined_(inlined) {}

  std::string group_function(const Group& group, std::size_t number) {
    used_buffers_.clear();
    written_buffers_.clear();
    std::string body;
    for (OpId out : group.outputs) body += nest(out, out == group.tiled ? &group.tiles : nullptr);
    std::string head = "static void group_" + std::to_string(number) + "(float* const* b) {\n";
    for (int k : used_buffers_) {
      const bool written = written_buffers_.count(k) > 0;
      head += std::string("  ") + (written ? "float" : "const float") + "* __restrict b" + std::to_string(k) + " = b[" +
              std::to_string(k) + "];\n";
    }
    return head + body + "}\n\n";
  }

 private:
  std::string fresh(const char* prefix) { return prefix + std::to_string(counter_++); }

  std::string linear(const OpId id, const Index& index) {
    const auto strides = row_major_strides(program_.op(id).shape.dims);
    std::string out;
    for (std::size_t d = 0; d < index.size(); ++d)
      out += (d ? " + " : "") + (strides[d] == 1 ? index[d] : index[d] + "*" + std::to_string(strides[d]));
    return out.empty() ? "0" : out;
  }

  // The operand index of an affine map, given output and reduction index expressions.
  Index affine(const std::vector<AffineIndex>& map, const Index& out, const Index& red) {
    Index index;
    for (const AffineIndex& a : map) {
      std::string e;
      if (a.out_dim >= 0) e = a.out_scale == 1 ? out[a.out_dim] : std::to_string(a.out_scale) + "*" + out[a.out_dim];
      if (a.red_dim >= 0) e += (e.empty() ? "" : " + ") + red[a.red_dim];
      if (a.offset != 0 || e.empty()) e += (e.empty() ? "" : " + ") + std::string("(") + std::to_string(a.offset) + ")";
      index.push_back("(" + e + ")");
    }
    return index;
  }

  // Row-major multi-index of a linear index expression.
  static Index unravel(const std::string& linear, const std::vector<std::int64_t>& dims) {
    Index index(dims.size());
    std::int64_t inner = 1;
    for (std::size_t d = dims.size(); d-- > 0;) {
      index[d] = "((" + linear + ") / " + std::to_string(inner) + " % " + std::to_string(std::max<std::int64_t>(dims[d], 1)) + ")";
      inner *= std::max<std::int64_t>(dims[d], 1);
    }
    return index;
  }

  std::string read_buffer(Scope& scope, OpId id, const Index& index) {
    const int k = buffer_of_[id];
    used_buffers_.insert(k);
    const std::string v = fresh("v");
    scope.line("const float " + v + " = b" + std::to_string(k) + "[" + linear(id, index) + "];");
    return v;
  }

  // The value of op `id` at `index`, emitting what it needs into `scope`.
  std::string value(Scope& scope, OpId id, const Index& index) {
    const std::string key = std::to_string(id) + "@" + join(index);
    if (auto it = scope.known.find(key); it != scope.known.end()) return it->second;
    std::string result;
    const Op& op = program_.op(id);
    const auto operands = program_.operands(id);
    if (!inlined_[id]) {
      result = read_buffer(scope, id, index);
    } else if (const ElementwiseOp* e = find_elementwise_op(op.opcode)) {
      std::vector<std::string> args;
      for (OpId o : operands) args.push_back(value(scope, o, index));
      result = fresh("v");
      scope.line("const float " + result + " = " + instantiate(*e, args) + ";");
    } else if (op.opcode == "broadcast" || op.opcode == "transpose") {
      result = value(scope, operands[0], affine(structural_index_map(program_, id), index, {}));
    } else if (is_linear_reshape(op.opcode)) {
      result = value(scope, operands[0], unravel(linear(id, index), program_.op(operands[0]).shape.dims));
    } else if (is_reduction_opcode(op.opcode)) {
      // Inlined without tiling: recomputed wherever it is needed (only when the group's nest
      // cannot carry it as an accumulator).
      const ReductionForm form = reduction_form(program_, id);
      result = fresh("acc");
      scope.line("float " + result + " = " + init_value(scope, id, form) + ";");
      const std::string r = fresh("r");
      scope.line("for (int64_t " + r + " = 0; " + r + " < " + std::to_string(form.extent()) + "; ++" + r + ") {");
      Scope inner{"", scope.known, scope.indent + 1};
      const std::string term = reduction_term(inner, id, form, index, r);
      inner.line(result + " = " + combine(form, result, term) + ";");
      scope.code += inner.code;
      scope.line("}");
    } else {
      throw UnsupportedProgram("op '" + op.name + "' (" + op.opcode + ") cannot be generated");
    }
    scope.known[key] = result;
    return result;
  }

  std::string init_value(Scope& scope, OpId id, const ReductionForm& form) {
    if (form.init_operand < 0) return float_literal(form.identity);
    return value(scope, program_.operands(id)[form.init_operand], {});
  }

  std::string combine(const ReductionForm& form, const std::string& acc, const std::string& term) {
    return instantiate(*find_elementwise_op(form.combine), {acc, term});
  }

  // The term of reduction `id` at output `out` and flattened reduction index `r`.
  std::string reduction_term(Scope& scope, OpId id, const ReductionForm& form, const Index& out, const std::string& r) {
    Index red = unravel(r, form.red_sizes);
    if (form.red_sizes.size() == 1) red = {r};
    for (auto& q : red) {  // name them once: they appear in several operand indices
      const std::string name = fresh("q");
      scope.line("const int64_t " + name + " = " + q + ";");
      q = name;
    }
    const auto operands = program_.operands(id);
    std::vector<std::string> factors;
    for (std::size_t k = 0; k < form.operands.size(); ++k) {
      const OpId source = operands[k];
      Index index = affine(form.operands[k], out, red);
      if (!form.bounds_checked[k]) {
        factors.push_back(value(scope, source, index));
        continue;
      }
      const auto& dims = program_.op(source).shape.dims;
      const std::string inside = fresh("in");
      std::string test = "true";
      for (std::size_t d = 0; d < dims.size(); ++d) {
        const std::string name = fresh("x");
        scope.line("const int64_t " + name + " = " + index[d] + ";");
        index[d] = name;
        test += " && " + name + " >= 0 && " + name + " < " + std::to_string(dims[d]);
      }
      scope.line("const bool " + inside + " = " + test + ";");
      Index clamped;  // a padded position reads element 0 (in range) and is then discarded
      for (const auto& i : index) clamped.push_back("(" + inside + " ? " + i + " : 0)");
      // Padding is zero in a convolution, the init value in a reduce-window.
      const std::string padding = form.product ? "0.0f" : init_value(scope, id, form);
      Scope guarded{"", scope.known, scope.indent};
      const std::string v = value(guarded, source, clamped);
      scope.code += guarded.code;
      factors.push_back("(" + inside + " ? " + v + " : " + padding + ")");
    }
    return form.product ? factors[0] + " * " + factors[1] : factors[0];
  }

  // The loop nest that writes materialized op `out`.
  std::string nest(OpId out, const TileChoice* tiles) {
    const Op& op = program_.op(out);
    const auto& dims = op.shape.dims;
    const std::size_t rank = dims.size();
    // The nest computes `out` itself; every other reader of it goes through its buffer.
    inlined_[out] = true;
    const auto reduction = accumulated_reduction(program_, out, inlined_);
    std::optional<ReductionForm> form;
    if (reduction) form = reduction_form(program_, *reduction);
    std::vector<std::int64_t> tile(rank);
    for (std::size_t d = 0; d < rank; ++d) {
      const std::int64_t wanted = tiles && d < tiles->out.size() && tiles->out[d] > 0 ? tiles->out[d] : dims[d];
      tile[d] = std::clamp<std::int64_t>(wanted, 1, std::max<std::int64_t>(dims[d], 1));
    }
    const int k = buffer_of_[out];
    used_buffers_.insert(k);
    written_buffers_.insert(k);
    const std::string target = "b" + std::to_string(k);

    Scope s;
    s.indent = 1;
    s.line("{  // " + op.name + " = " + op.opcode + " " + op.shape.to_string());
    s.indent++;
    Index t(rank), i(rank);
    for (std::size_t d = 0; d < rank; ++d) {
      t[d] = fresh("t");
      i[d] = fresh("i");
    }
    for (std::size_t d = 0; d < rank; ++d) {
      s.line("for (int64_t " + t[d] + " = 0; " + t[d] + " < " + std::to_string(dims[d]) + "; " + t[d] + " += " + std::to_string(tile[d]) + ")");
      s.indent++;
    }
    const auto open_points = [&](std::size_t from, std::size_t to) {
      for (std::size_t d = from; d < to; ++d) {
        s.line("for (int64_t " + i[d] + " = " + t[d] + "; " + i[d] + " < min_index(" + t[d] + " + " + std::to_string(tile[d]) +
               ", " + std::to_string(dims[d]) + "); ++" + i[d] + ")");
        s.indent++;
      }
    };
    const auto close = [&](std::size_t levels) { s.indent -= static_cast<int>(levels); };
    s.line("{");
    s.indent++;
    if (!form) {
      open_points(0, rank);
      s.line("{");
      Scope inner{"", {}, s.indent + 1};
      const std::string v = value(inner, out, i);
      s.code += inner.code;
      s.line("  " + target + "[" + linear(out, i) + "] = " + v + ";");
      s.line("}");
      close(rank);
    } else {
      // Accumulator: one slot per point of the output tile, in row-major tile order.
      std::int64_t points = 1;
      for (std::size_t d = 0; d < rank; ++d) points *= tile[d];
      const std::string acc = fresh("tile_acc");
      std::string slot;
      {
        std::int64_t stride = 1;
        for (std::size_t d = rank; d-- > 0;) {
          slot = "(" + i[d] + " - " + t[d] + ")" + (stride == 1 ? "" : "*" + std::to_string(stride)) + (slot.empty() ? "" : " + " + slot);
          stride *= tile[d];
        }
        if (slot.empty()) slot = "0";
      }
      s.line("static float " + acc + "[" + std::to_string(std::max<std::int64_t>(points, 1)) + "];");
      open_points(0, rank);
      {
        Scope init{"", {}, s.indent + 1};
        const std::string v = init_value(init, *reduction, *form);
        s.line("{");
        s.code += init.code;
        s.line("  " + acc + "[" + slot + "] = " + v + ";");
        s.line("}");
      }
      close(rank);
      const std::int64_t extent = form->extent();
      const std::int64_t red_tile = std::clamp<std::int64_t>(tiles && tiles->reduction ? *tiles->reduction : extent, 1, std::max<std::int64_t>(extent, 1));
      const std::string tr = fresh("tr"), r = fresh("r");
      s.line("for (int64_t " + tr + " = 0; " + tr + " < " + std::to_string(extent) + "; " + tr + " += " + std::to_string(red_tile) + ")");
      s.indent++;
      // The reduction loop sits just outside the innermost output dimension, so the innermost
      // loop runs along contiguous output (and, for row-major operands, input) elements.
      const std::size_t outer = rank == 0 ? 0 : rank - 1;
      open_points(0, outer);
      s.line("for (int64_t " + r + " = " + tr + "; " + r + " < min_index(" + tr + " + " + std::to_string(red_tile) + ", " +
             std::to_string(extent) + "); ++" + r + ")");
      s.indent++;
      open_points(outer, rank);
      s.line("{");
      Scope inner{"", {}, s.indent + 1};
      const std::string term = reduction_term(inner, *reduction, *form, i, r);
      s.code += inner.code;
      s.line("  " + acc + "[" + slot + "] = " + combine(*form, acc + "[" + slot + "]", term) + ";");
      s.line("}");
      close(rank - outer + 1 + outer + 1);
      // Epilogue: the elementwise ops after the reduction, once per output element.
      open_points(0, rank);
      Scope epilogue{"", {}, s.indent + 1};
      epilogue.known[std::to_string(*reduction) + "@" + join(i)] = acc + "[" + slot + "]";
      const std::string v = value(epilogue, out, i);
      s.line("{");
      s.code += epilogue.code;
      s.line("  " + target + "[" + linear(out, i) + "] = " + v + ";");
      s.line("}");
      close(rank);
    }
    s.indent--;
    s.line("}");
    close(rank);
    s.indent--;
    s.line("}");
    inlined_[out] = false;
    return s.code;
  }

  const Program& program_;
  const std::vector<int>& buffer_of_;
  std::vector<bool> inlined_;
  std::set<int> used_buffers_, written_buffers_;
  int counter_ = 0;
};

}  // namespace

GeneratedKernel generate_cpu_kernel(const Kernel& kernel, const SearchSpace& space, const Config& config) {
  const Program& program = kernel.body();
  check_supported(program);
  const auto roles = knob_roles(space);
  const bool fusion_mode = std::any_of(roles.begin(), roles.end(), [](const KnobInfo& k) { return k.role == KnobRole::kFuse; });

  std::vector<Group> groups;
  std::vector<OpId> checked;  // the outputs compared with the reference
  for (OpId id : program.outputs())
    if (!program.op(id).is_parameter()) checked.push_back(id);
  std::vector<bool> inlined(program.size(), true);
  for (OpId id = 0; id < program.size(); ++id)
    if (program.op(id).is_parameter()) inlined[id] = false;

  if (fusion_mode) {
    const FusionPlan plan = partition(program, fusion_config_of(program, space, config));
    for (const FusedKernel& fused : plan.kernels) {
      Group group{fused.members, fused.outputs, fused.outputs.back(), {}};
      for (OpId id : fused.outputs) inlined[id] = false;
      groups.push_back(std::move(group));
    }
    for (Group& group : groups) {
      const auto reduction = accumulated_reduction(program, group.tiled, [&] {
        auto flags = inlined;
        flags[group.tiled] = true;
        return flags;
      }());
      std::optional<std::int64_t> extent;
      if (reduction) extent = reduction_form(program, *reduction).extent();
      group.tiles = default_tiles(program, group.tiled, extent);
    }
  } else {
    Group group;
    for (OpId id : program.topological_order())
      if (!program.op(id).is_parameter()) group.members.push_back(id);
    for (OpId id : group.members)
      if (std::find(checked.begin(), checked.end(), id) != checked.end()) group.outputs.push_back(id);
    for (OpId id : group.outputs) inlined[id] = false;
    group.tiled = program.root();
    group.tiles = read_tiles(roles, config, program.op(group.tiled).shape.dims.size());
    groups.push_back(std::move(group));
  }

  GeneratedKernel result;
  BufferPlan& buffers = result.buffers;
  std::vector<int> buffer_of(program.size(), -1);
  const auto add_buffer = [&](OpId id) {
    buffer_of[id] = static_cast<int>(buffers.ops.size());
    buffers.ops.push_back(id);
    buffers.sizes.push_back(program.op(id).shape.element_count());
  };
  for (OpId id : ordered_parameters(program)) add_buffer(id);
  buffers.parameter_count = buffers.ops.size();
  for (OpId id : checked) add_buffer(id);
  buffers.output_count = checked.size();
  for (const Group& group : groups)
    for (OpId id : group.outputs)
      if (buffer_of[id] < 0) add_buffer(id);

  Generator generator(program, buffer_of, inlined);
  std::string source =
      "// Generated by perftune's CPU backend: kernel " + kernel.name() + " (key " + kernel.key() + "), config " +
      config.to_string() + ".\n"
      "typedef long int64_t;\n"
      "static inline int64_t min_index(int64_t a, int64_t b) { return a < b ? a : b; }\n\n";
  for (std::size_t g = 0; g < groups.size(); ++g) {
    source += generator.group_function(groups[g], g);
    result.loop_nests += groups[g].outputs.size();
  }
  source += "extern \"C\" void perftune_entry(float* const* b) {\n";
  for (std::size_t g = 0; g < groups.size(); ++g) source += "  group_" + std::to_string(g) + "(b);\n";
  source += "}\n";
  result.source = std::move(source);
  return result;
}

}  // namespace perftune
