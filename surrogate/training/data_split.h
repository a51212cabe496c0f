#pragma once
// Train / validation / test splits of measured kernels. Never by config: every config of a kernel
// lands on one side, so a reported score is always about kernels the model never saw.
//   by "device"         test (and optional validation) = kernels measured on the named devices;
//                       "disjoint_from_test": sources that must share no kernel with them;
//                       a validation_fraction also validates that share of the other kernels'
//                       program groups (grouped as by "program", seeded)
//   by "kernel"         a seeded random share of kernels (grouped by key: one kernel measured on
//                       several devices stays on one side)
//   by "program"        the same, grouped by program: a whole program measured under fusion configs
//                       is its own group, and a kernel belongs to every such program that holds
//                       all its ops (same name, opcode and shape); a kernel of a test program is
//                       tested. Kernels outside every program group by program_of().
//   by "leave_one_out"  one fold per kernel key: train on all others, test on it
//   by "leave_one_program_out"
//                       one fold per program group (as by "program"): test on the program and
//                       every kernel it contains, train on the rest; validation_fraction of the
//                       other programs (seeded per fold, at least one program left to train on)
//                       validate instead of training
#include <cstdint>
#include <string>
#include <vector>

#include "ir/corpus.h"
#include "ir/json_view.h"

namespace perftune {

struct SplitSpec {
  std::string by = "kernel";
  std::vector<std::string> test, validation;  // device names (by "device")
  // By "device": sources (device or file names) that must share no kernel with the test side, e.g.
  // a corpus collected with the test networks' kernels kept off; one that does is an InputError
  // (any other training kernel equal to a test kernel is left out, Fold::left_out).
  std::vector<std::string> disjoint_from_test;
  double test_fraction = 0.2;                 // by "kernel" / "program"
  double validation_fraction = 0.0;           // of the groups left after the test ones; 0 = held-out configs instead
  std::uint64_t seed = 1;

  // Unknown keys, an unknown mode, a device mode without test devices are InputErrors.
  static SplitSpec from_json(const JsonView& json);
};

// A kernel together with the source file it came from (device matching also accepts the file's name).
struct SourcedKernel {
  const MeasuredKernel* kernel;
  std::string source;
};

struct Fold {
  std::string name;  // the held-out kernel (leave_one_out) or program (leave_one_program_out), else "test"
  std::vector<const MeasuredKernel*> train, validation, test;
  std::size_t left_out = 0;  // kernels of the training sources equal to a test kernel: not trained on
};

// Throws InputError naming `file` and "$.split" when the split leaves training or test empty, or
// names a device that matches nothing.
std::vector<Fold> make_folds(const std::vector<SourcedKernel>& kernels, const SplitSpec& spec, const std::string& file);

// The program a kernel belongs to when no whole program in the corpus claims it: the kernel name's
// part before '/', else the kernel body's program name.
std::string program_of(const MeasuredKernel& kernel);
// True if every non-parameter op of `kernel` appears in `program` with the same name, opcode and shape.
bool is_part_of(const Kernel& kernel, const Program& program);
// Case, spaces and punctuation ignored: `name` must appear inside the device (or source file)
// text once both are normalized, so "TITAN RTX" matches "NVIDIA TITAN RTX".
bool device_matches(const std::string& name, const std::string& device_or_source);

}  // namespace perftune
