#pragma once
// What every importer returns: programs (whole, unfused graphs) and measured kernels (a kernel,
// its search space, and what was measured on which device).
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ir/kernel.h"
#include "ir/measurement.h"
#include "ir/search_space.h"

namespace perftune {

struct Measurement {
  Config config;
  MeasureResult result;
};

struct MeasuredKernel {
  Kernel kernel;
  std::shared_ptr<const SearchSpace> space;  // null for a kernel known without measurements
                                             // (a fusion of an imported program)
  std::string device;  // where the measurements were taken
  std::vector<Measurement> measurements;
  std::optional<std::size_t> default_index;  // the config the compiler picks by itself (XLA's default)
  // Successful runtimes of the kernel as other schedulers schedule it (record log reference
  // lines: Halide's autoschedulers, a library), by name.
  std::map<std::string, double> references;

  std::size_t failed_count() const;
  // Fastest ok measurement, if any.
  std::optional<std::size_t> best_index() const;
  // Each config's first measurement, in recording order: what replay serves (later duplicates
  // are ignored).
  std::vector<const Measurement*> first_recordings() const;
};

struct Corpus {
  std::string format;  // "tpu-op-tuning", "tpu-module-tuning", "kernel-tuner", "tpugraphs-npz",
                       // "perftune-program", "record-log"
  std::string path;
  std::vector<std::shared_ptr<const Program>> programs;
  std::vector<MeasuredKernel> kernels;
  // Measurements of whole programs (e.g. layout configs of a module), not of one kernel.
  std::vector<Measurement> program_measurements;
  // What the reader could not find, repaired or merged on the way (a Kernel Tuner cache without
  // the space.json that names its default config, a record log's torn last line, merged
  // duplicates), one line each; `perftune inspect` and experiments print them.
  std::vector<std::string> notes;

  std::size_t measurement_count() const;  // kernels' and programs', failed included
  std::size_t failed_count() const;
};

// The checks every importer's output passes (load_source applies them to every format): each
// op's shape (shape_problem), each ok runtime (runtime_problem), each cost (cost_problem) and each
// measured config (config_problem). Throws InputError naming corpus.path and the kernel, op or
// measurement. Importers check the same things where they read them, to name a finer place; this
// is the net under all of them, so no format can hand the tuner a value another reader rejects.
void check_corpus_values(const Corpus& corpus);

// A corpus of one measured kernel: what single-kernel sources (Kernel Tuner caches, TpuGraphs
// tile files) import.
Corpus single_kernel_corpus(std::string format, std::string path, MeasuredKernel kernel);

}  // namespace perftune
