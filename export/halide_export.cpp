#include "export/halide_export.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "export/tensor_arena.h"
#include "hardware/process/subprocess.h"
#include "ir/file_io.h"
#include "ir/program_json.h"

namespace perftune {

namespace {

constexpr std::size_t kWeightAlignment = 64;  // bytes: a cache line, and any vector load's alignment
constexpr std::size_t kArenaAlignment = 64;   // bytes: the intermediates' arena and each tensor in it, as the weights
constexpr double kToolTimeoutSeconds = 1800;  // a large network's kernels compile in minutes

std::string shape_text(const std::vector<std::int64_t>& dims) {
  std::string out = "[";
  for (std::size_t d = 0; d < dims.size(); ++d) out += (d ? ", " : "") + std::to_string(dims[d]);
  return out + "]";
}

// Extents in Halide's order (innermost first), as a C array initializer.
std::string halide_extents(const std::vector<std::int64_t>& dims) {
  std::string out = "{";
  for (std::size_t d = dims.size(); d-- > 0;) out += std::to_string(dims[d]) + (d ? ", " : "");
  return out + (dims.empty() ? "0}" : "}");
}

std::string c_string(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out + "\"";
}

std::string run_tool(const std::vector<std::string>& argv, const std::string& what) {
  const SubprocessResult result = run_subprocess(argv, "", kToolTimeoutSeconds);
  if (!result.ok())
    throw std::runtime_error(what + " failed (" + result.describe() + "): " + tail_lines(result.err + result.out, 12));
  return result.out;
}

bool embedded(const Op& op) { return op.is_parameter() && op.weight && op.literal; }

// The intermediate tensors of the library's calls (not arguments, weights or constants) and where
// each lives in the one arena the entry point allocates (tensor_arena.h).
struct IntermediateArena {
  std::map<OpId, std::size_t> offset;
  std::size_t bytes = 0;
};

IntermediateArena plan_intermediates(const NetworkLibrary& library, const std::vector<OpId>& arguments) {
  const Program& program = *library.program;
  const std::set<OpId> argument_set(arguments.begin(), arguments.end());
  std::map<OpId, TensorLifetime> lives;
  for (std::size_t c = 0; c < library.calls.size(); ++c) {
    auto touch = [&](OpId id) {
      const Op& op = program.op(id);
      if (argument_set.count(id) || op.is_parameter() || op.is_constant()) return;
      auto [life, added] = lives.try_emplace(id, TensorLifetime{c, c, 0});
      life->second.last = c;
      life->second.bytes = static_cast<std::size_t>(std::max<std::int64_t>(1, op.shape.element_count())) * sizeof(float);
    };
    for (OpId id : library.calls[c].inputs) touch(id);
    for (OpId id : library.calls[c].outputs) touch(id);
  }
  std::vector<TensorLifetime> tensors;
  for (const auto& [id, life] : lives) tensors.push_back(life);
  const TensorArena plan = plan_tensor_arena(tensors, kArenaAlignment);
  IntermediateArena arena;
  arena.bytes = plan.bytes;
  std::size_t i = 0;
  for (const auto& [id, life] : lives) arena.offset[id] = plan.offsets[i++];
  return arena;
}

// write_network_library's phases, in order, over what they share: the library, its folders, and
// what the earlier phases leave for the later ones.
struct LibraryWriter {
  const NetworkLibrary& library;
  const Program& program;
  const std::string& name;
  const std::filesystem::path out, build;
  // Set by write_weights.
  std::map<OpId, std::size_t> weight_offset;
  std::size_t weight_bytes = 0;
  // Set by plan_arguments: the entry point's arguments (inputs, then outputs) and its intermediates.
  std::vector<OpId> inputs, outputs, arguments;
  IntermediateArena arena;

  std::map<std::string, std::string> compile_kernels() const;
  void write_schedules() const;
  void write_weights();
  void plan_arguments();
  void write_header() const;
  void write_entry_point() const;
  void write_entry_preamble(std::ostringstream& entry) const;
  void write_argument_checks(std::ostringstream& entry, std::map<OpId, std::string>& buffer) const;
  void declare_buffers(std::ostringstream& entry, std::map<OpId, std::string>& buffer) const;
  void write_calls(std::ostringstream& entry, const std::map<OpId, std::string>& buffer) const;
  void archive() const;
};

// 1. The kernels, ahead of time, and the runtime they share; returns the kernels compiled under their fallback.
std::map<std::string, std::string> LibraryWriter::compile_kernels() const {
  nlohmann::json plan = {{"kernels", nlohmann::json::array()}, {"profile", library.profile}};
  for (const LibraryKernel& kernel : library.kernels)
    plan["kernels"].push_back({{"function", kernel.function}, {"program", program_to_json(kernel.body)}, {"schedule", kernel.schedule},
                               {"fallback", kernel.fallback}});
  write_file_atomically((build / "plan.json").string(), plan.dump() + "\n");
  const std::string reply = run_tool({PERFTUNE_HALIDE_AOT, (build / "plan.json").string(), build.string()}, "compiling the kernels (perftune_halide_aot)");
  std::map<std::string, std::string> fell_back;
  for (const auto& entry : nlohmann::json::parse(reply).at("fell_back"))
    fell_back[entry.at("function").get<std::string>()] = entry.at("error").get<std::string>();
  std::filesystem::copy_file(std::string(PERFTUNE_HALIDE_INCLUDE_DIR) + "/HalideRuntime.h", out / "HalideRuntime.h",
                             std::filesystem::copy_options::overwrite_existing);
  return fell_back;
}

// The schedules as Halide C++, one function per kernel.
void LibraryWriter::write_schedules() const {
  std::ostringstream schedule;
  schedule << "// " << name << ".schedule.h: the schedule of every kernel of " << name << " as Halide C++ (perftune export).\n"
           << "// apply_schedule_FUNCTION(pipeline, target) applies one kernel's schedule to its algorithm: perftune's\n"
           << "// lowering of the kernel (hardware/halide/worker/lowering.h; halide/apply_schedule.h's schedule_algorithm), whose\n"
           << "// Funcs it finds by name. Read back from the pipelines " << name << ".a was compiled from.\n"
           << "#pragma once\n\n#include <map>\n#include <string>\n\n#include \"Halide.h\"\n";
  for (const LibraryKernel& kernel : library.kernels) schedule << "\n" << read_file((build / (kernel.function + ".schedule.txt")).string());
  write_file_atomically((out / (name + ".schedule.h")).string(), schedule.str());
}

// 2. The weights, one aligned blob.
void LibraryWriter::write_weights() {
  std::string blob;
  for (OpId id = 0; id < program.size(); ++id) {
    if (!embedded(program.op(id))) continue;
    blob.resize((blob.size() + kWeightAlignment - 1) / kWeightAlignment * kWeightAlignment, '\0');
    weight_offset[id] = blob.size();
    const auto& values = *program.op(id).literal;
    blob.append(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float));
  }
  weight_bytes = blob.size();
  write_file_atomically((out / (name + ".weights")).string(), blob);
  std::ofstream s(build / (name + "_weights.S"));
  s << "  .section .rodata\n  .balign " << kWeightAlignment << "\n  .global " << name << "_weights\n" << name << "_weights:\n"
    << "  .incbin " << c_string(std::filesystem::absolute(out / (name + ".weights")).string()) << "\n  .byte 0\n"
    << "  .section .note.GNU-stack,\"\",@progbits\n";
}

// 3. The header's arguments and the arena of the intermediates.
void LibraryWriter::plan_arguments() {
  inputs = library_inputs(program);
  outputs = library_outputs(program);
  arguments = inputs;
  arguments.insert(arguments.end(), outputs.begin(), outputs.end());
  for (OpId id : arguments)
    if (program.op(id).shape.dims.size() > 8) throw std::runtime_error("argument " + program.op(id).name + " has more than 8 dimensions");
  arena = plan_intermediates(library, arguments);
}

// 3. The header.
void LibraryWriter::write_header() const {
  std::ostringstream header;
  header << "// " << name << ": network '" << program.name() << "' compiled by perftune export (Halide 14, ahead of time,\n"
         << "// every kernel under its tuned schedule). Link " << name << ".a with -lpthread -ldl.\n"
         << "#ifndef PERFTUNE_" << name << "_H\n#define PERFTUNE_" << name << "_H\n\n#include <stdint.h>\n\n#include \"HalideRuntime.h\"\n\n"
         << "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n"
         << "// Runs the network once. Every argument is a halide_buffer_t of f32 with host memory, its dimensions in\n"
         << "// Halide's order (innermost first: the reverse of the shapes below, which are row-major, outermost first):\n";
  for (std::size_t i = 0; i < arguments.size(); ++i)
    header << "//   " << (i < inputs.size() ? "input  " : "output ") << (i < inputs.size() ? i : i - inputs.size()) << "  "
           << program.op(arguments[i]).name << "  " << shape_text(program.op(arguments[i]).shape.dims) << "\n";
  header << "// Weights: " << (weight_offset.empty() ? "none embedded; the network's weights (if any) are inputs above."
                                                     : std::to_string(weight_offset.size()) + " tensors embedded in " + name + ".a (" +
                                                           std::to_string(weight_bytes) + " bytes; also in " + name + ".weights).")
         << "\n// Memory: the intermediate tensors take " << arena.bytes << " bytes per calling thread (tensors never alive together\n"
         << "// share bytes), allocated at the thread's first call and kept until it exits.\n"
         << "// Returns 0, or non-zero with " << name << "_last_error() saying why: -1 for an argument of the wrong type\n"
         << "// or shape (nothing is run), else the Halide error code of the kernel that failed.\n"
         << "int " << name << "(";
  for (std::size_t i = 0; i < arguments.size(); ++i) header << (i ? ", " : "") << "struct halide_buffer_t *" << c_identifier(program.op(arguments[i]).name);
  header << ");\n\n// The last error of this thread's calls, \"\" after a call that succeeded.\nconst char *" << name << "_last_error(void);\n\n"
         << "// The arguments above, for code that builds their buffers: inputs first, then outputs.\n"
         << "#define " << name << "_INPUTS " << inputs.size() << "\n#define " << name << "_OUTPUTS " << outputs.size() << "\n"
         << "static const char *const " << name << "_argument_names[] = {";
  for (std::size_t i = 0; i < arguments.size(); ++i) header << (i ? ", " : "") << c_string(program.op(arguments[i]).name);
  header << "};\nstatic const int " << name << "_argument_ranks[] = {";
  for (std::size_t i = 0; i < arguments.size(); ++i) header << (i ? ", " : "") << program.op(arguments[i]).shape.dims.size();
  header << "};\nstatic const int64_t " << name << "_argument_shapes[][8] = {";
  for (std::size_t i = 0; i < arguments.size(); ++i) {
    header << (i ? ", " : "") << "{";
    const auto& dims = program.op(arguments[i]).shape.dims;
    for (std::size_t d = 0; d < dims.size(); ++d) header << (d ? ", " : "") << dims[d];
    header << (dims.empty() ? "0}" : "}");
  }
  header << "};\n\n#ifdef __cplusplus\n}  // extern \"C\"\n#endif\n\n#endif\n";
  write_file_atomically((out / (name + ".h")).string(), header.str());
}

// 4. The entry point.
void LibraryWriter::write_entry_point() const {
  std::ostringstream entry;
  write_entry_preamble(entry);
  std::map<OpId, std::string> buffer;  // program op -> the expression of its buffer's address
  write_argument_checks(entry, buffer);
  declare_buffers(entry, buffer);
  write_calls(entry, buffer);
  write_file_atomically((build / (name + "_entry.cpp")).string(), entry.str());
}

// The entry point's includes and helpers, up to its parameter list.
void LibraryWriter::write_entry_preamble(std::ostringstream& entry) const {
  entry << "// Generated by perftune export: the entry point of " << name << " (" << name << ".h).\n"
        << "#include <cstdarg>\n#include <cstdio>\n#include <cstdlib>\n#include <memory>\n\n#include \"" << name << ".h\"\n";
  for (const LibraryKernel& kernel : library.kernels) entry << "#include \"" << kernel.function << ".h\"\n";
  entry << "\nextern \"C\" const unsigned char " << name << "_weights[];\n\nnamespace {\n\n"
        << "thread_local char last_error[1024] = \"\";\n\n"
        << "struct Free {\n  void operator()(void *p) const { std::free(p); }\n};\n\n"
        << "int fail(int code, const char *format, ...) {\n  va_list args;\n  va_start(args, format);\n"
        << "  std::vsnprintf(last_error, sizeof last_error, format, args);\n  va_end(args);\n  return code;\n}\n\n"
        << "// A dense f32 buffer over `data`, extents innermost first.\n"
        << "void dense(halide_buffer_t &b, halide_dimension_t *dims, int rank, const int *extents, const void *data) {\n"
        << "  int stride = 1;\n  for (int d = 0; d < rank; ++d) {\n    dims[d] = halide_dimension_t(0, extents[d], stride);\n"
        << "    stride *= extents[d];\n  }\n  b = halide_buffer_t();\n  b.host = static_cast<uint8_t *>(const_cast<void *>(data));\n"
        << "  b.type = halide_type_t(halide_type_float, 32);\n  b.dimensions = rank;\n  b.dim = rank ? dims : nullptr;\n}\n\n"
        << "int check(const halide_buffer_t *b, const char *what, int rank, const int *extents) {\n"
        << "  if (!b) return fail(-1, \"%s: a null buffer\", what);\n"
        << "  if (!b->host) return fail(-1, \"%s: a buffer without host memory\", what);\n"
        << "  if (b->type.code != halide_type_float || b->type.bits != 32 || b->type.lanes != 1) return fail(-1, \"%s: f32 elements expected\", what);\n"
        << "  if (b->dimensions != rank) return fail(-1, \"%s: %d dimensions expected, got %d\", what, rank, b->dimensions);\n"
        << "  for (int d = 0; d < rank; ++d)\n    if (b->dim[d].extent != extents[d])\n"
        << "      return fail(-1, \"%s: dimension %d (innermost first) has extent %d, %d expected\", what, d, b->dim[d].extent, extents[d]);\n"
        << "  return 0;\n}\n\n}  // namespace\n\n"
        << "extern \"C\" const char *" << name << "_last_error(void) { return last_error; }\n\n"
        << "extern \"C\" int " << name << "(";
}

// The entry point's parameters, each an argument's buffer, and the checks of their types and shapes.
void LibraryWriter::write_argument_checks(std::ostringstream& entry, std::map<OpId, std::string>& buffer) const {
  for (std::size_t i = 0; i < arguments.size(); ++i) {
    const std::string arg = "arg" + std::to_string(i);
    entry << (i ? ", " : "") << "halide_buffer_t *" << arg;
    buffer[arguments[i]] = arg;
  }
  entry << ") {\n  last_error[0] = '\\0';\n";
  for (std::size_t i = 0; i < arguments.size(); ++i) {
    const Op& op = program.op(arguments[i]);
    entry << "  {\n    static const int extents[] = " << halide_extents(op.shape.dims) << ";\n    if (int code = check(arg" << i << ", "
          << c_string((i < inputs.size() ? "input " : "output ") + op.name + " " + shape_text(op.shape.dims)) << ", " << op.shape.dims.size()
          << ", extents)) return code;\n  }\n";
  }
}

// Embedded weights and intermediates: a buffer each. Intermediates share one arena per thread,
// allocated at its first call and kept (fresh pages each call would fault in on every run).
void LibraryWriter::declare_buffers(std::ostringstream& entry, std::map<OpId, std::string>& buffer) const {
  if (arena.bytes) {
    entry << "  thread_local const std::unique_ptr<unsigned char, Free> arena(static_cast<unsigned char *>(std::aligned_alloc("
          << kArenaAlignment << ", " << arena.bytes << ")));\n  if (!arena) return fail(-1, \"cannot allocate the " << arena.bytes
          << " bytes of the intermediate tensors\");\n";
  }
  std::set<OpId> declared;
  auto declare = [&](OpId id) {
    if (buffer.count(id) || declared.count(id)) return;
    const Op& op = program.op(id);
    const std::string t = "t" + std::to_string(id);
    entry << "  static const int " << t << "_extents[] = " << halide_extents(op.shape.dims) << ";\n  halide_dimension_t " << t << "_dims["
          << std::max<std::size_t>(1, op.shape.dims.size()) << "];\n  halide_buffer_t " << t << ";\n  dense(" << t << ", " << t << "_dims, "
          << op.shape.dims.size() << ", " << t << "_extents, ";
    if (weight_offset.count(id)) {
      entry << name << "_weights + " << weight_offset.at(id) << ");\n";
    } else {
      if (op.is_parameter() || op.is_constant()) throw std::runtime_error("kernel input " + op.name + " is neither an argument, a weight nor computed");
      entry << "arena.get() + " << arena.offset.at(id) << ");\n";
    }
    buffer[id] = "&" + t;
    declared.insert(id);
  };
  for (const LibraryCall& call : library.calls) {
    for (OpId id : call.inputs) declare(id);
    for (OpId id : call.outputs) declare(id);
  }
}

// The kernels' calls in the library's order, each returning its Halide error.
void LibraryWriter::write_calls(std::ostringstream& entry, const std::map<OpId, std::string>& buffer) const {
  for (std::size_t c = 0; c < library.calls.size(); ++c) {
    const LibraryCall& call = library.calls[c];
    const std::string& function = library.kernels.at(call.kernel).function;
    entry << "  if (int code = " << function << "(";
    std::vector<OpId> args = call.inputs;
    args.insert(args.end(), call.outputs.begin(), call.outputs.end());
    for (std::size_t a = 0; a < args.size(); ++a) entry << (a ? ", " : "") << buffer.at(args[a]);
    entry << "))\n    return fail(code, \"kernel " << function << " (run " << c << ") failed with Halide error %d\", code);\n";
  }
  entry << "  return 0;\n}\n";
}

// 5. Compiled and archived.
void LibraryWriter::archive() const {
  const std::string include_dir = "-I" + out.string();
  run_tool({PERFTUNE_CXX_COMPILER, "-O2", "-std=c++17", "-fPIC", include_dir, "-I" + build.string(), "-c",
            (build / (name + "_entry.cpp")).string(), "-o", (build / (name + "_entry.o")).string()},
           "compiling the entry point");
  run_tool({PERFTUNE_CXX_COMPILER, "-c", (build / (name + "_weights.S")).string(), "-o", (build / (name + "_weights.o")).string()},
           "assembling the weights");
  std::vector<std::string> ar = {PERFTUNE_AR, "rcs", (out / (name + ".a")).string(), (build / (name + "_entry.o")).string(),
                                 (build / (name + "_weights.o")).string(), (build / "halide_runtime.o").string()};
  for (const LibraryKernel& kernel : library.kernels) ar.push_back((build / (kernel.function + ".o")).string());
  std::filesystem::remove(out / (name + ".a"));
  run_tool(ar, "archiving " + name + ".a");
}

}  // namespace

std::string c_identifier(const std::string& text) {
  std::string out;
  for (char c : text) out += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  if (out.empty() || std::isdigit(static_cast<unsigned char>(out.front()))) out = "n_" + out;
  return out;
}

std::vector<OpId> library_inputs(const Program& program) {
  std::vector<std::pair<std::int64_t, OpId>> parameters;
  for (OpId id = 0; id < program.size(); ++id)
    if (program.op(id).is_parameter() && !embedded(program.op(id))) parameters.emplace_back(program.op(id).parameter_number, id);
  std::sort(parameters.begin(), parameters.end());
  std::vector<OpId> inputs;
  for (const auto& [number, id] : parameters) inputs.push_back(id);
  return inputs;
}

std::vector<OpId> library_outputs(const Program& program) { return program.outputs(); }

std::map<std::string, std::string> write_network_library(const NetworkLibrary& library, const std::string& dir) {
  const std::filesystem::path out(dir);
  LibraryWriter writer{library, *library.program, library.name, out, out / "build"};
  std::filesystem::create_directories(writer.build);
  std::map<std::string, std::string> fell_back = writer.compile_kernels();
  writer.write_schedules();
  writer.write_weights();
  writer.plan_arguments();
  writer.write_header();
  writer.write_entry_point();
  writer.archive();
  return fell_back;
}

}  // namespace perftune
