#pragma once
// A network compiled ahead of time into a library a user links (`perftune export`): every kernel
// under its schedule (Halide AOT, by the perftune_halide_aot child process), one C entry point
// that checks its arguments and runs the kernels in order, and the weights embedded.
//
// DIR/NAME.a      the kernels, the Halide runtime, the entry point and the weights
// DIR/NAME.h      the entry point: int NAME(halide_buffer_t *input..., halide_buffer_t *output...)
//                 (its intermediate tensors share one arena per thread, tensor_arena.h, allocated at
//                 the thread's first call and kept),
//                 NAME_last_error(), and each argument's name and shape
// DIR/NAME.schedule.h   every kernel's schedule as Halide C++: apply_schedule_FUNCTION(Pipeline, Target)
// DIR/HalideRuntime.h   halide_buffer_t (Debian's libhalide14-0-dev header, copied so DIR stands alone)
// DIR/NAME.weights      the embedded weights, raw f32 (kept for reference; the library holds them)
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "ir/program.h"

namespace perftune {

struct LibraryKernel {
  std::string function;                          // its C symbol
  Program body;                                  // the kernel's program (Kernel::body())
  std::map<std::string, std::int64_t> schedule;  // its config's knobs (named_knobs)
  std::map<std::string, std::int64_t> fallback;  // used if Halide rejects `schedule` (the heuristic)
};

// One kernel run: which program ops feed its parameters (Kernel::parameters() order) and which
// it writes (computed_outputs(body) order).
struct LibraryCall {
  std::size_t kernel = 0;
  std::vector<OpId> inputs, outputs;
};

struct NetworkLibrary {
  std::string name;  // a C identifier
  const Program* program = nullptr;
  std::vector<LibraryKernel> kernels;
  std::vector<LibraryCall> calls;  // in an order that respects data dependences
  // Kernels compiled with Halide's profiler: at exit, the program that links the library prints each
  // kernel's time per run and its Funcs' shares (Halide's profiler report).
  bool profile = false;
};

// The entry point's arguments: the program's parameters in parameter order, except weights with
// values (embedded), then its outputs (Program::outputs()).
std::vector<OpId> library_inputs(const Program& program);
std::vector<OpId> library_outputs(const Program& program);

// Writes the files above into `dir` (created); returns the functions compiled under their fallback
// (function -> Halide's error). Throws std::runtime_error naming the kernel or the tool that failed.
std::map<std::string, std::string> write_network_library(const NetworkLibrary& library, const std::string& dir);

// `text` as a C identifier (letters, digits, underscores; not starting with a digit).
std::string c_identifier(const std::string& text);

}  // namespace perftune
