#include "ir/corpus.h"

#include <unordered_set>

#include "ir/input_error.h"

namespace perftune {

std::size_t MeasuredKernel::failed_count() const {
  std::size_t failed = 0;
  for (const auto& m : measurements) failed += m.result.ok() ? 0 : 1;
  return failed;
}

std::optional<std::size_t> MeasuredKernel::best_index() const {
  std::optional<std::size_t> best;
  for (std::size_t i = 0; i < measurements.size(); ++i)
    if (measurements[i].result.ok() && (!best || measurements[i].result.seconds < measurements[*best].result.seconds))
      best = i;
  return best;
}

std::vector<const Measurement*> MeasuredKernel::first_recordings() const {
  std::unordered_set<Config, ConfigHash> seen;
  std::vector<const Measurement*> first;
  for (const Measurement& m : measurements)
    if (seen.insert(m.config).second) first.push_back(&m);
  return first;
}

std::size_t Corpus::measurement_count() const {
  std::size_t total = program_measurements.size();
  for (const auto& kernel : kernels) total += kernel.measurements.size();
  return total;
}

std::size_t Corpus::failed_count() const {
  std::size_t failed = 0;
  for (const auto& m : program_measurements) failed += m.result.ok() ? 0 : 1;
  for (const auto& kernel : kernels) failed += kernel.failed_count();
  return failed;
}

namespace {

void check_program(const Program& program, const std::string& file, const std::string& where) {
  for (OpId id = 0; id < program.size(); ++id)
    if (auto problem = shape_problem(program.op(id).shape))
      throw InputError(file, where + ", op '" + program.op(id).name + "'", *problem);
}

void check_measurement(const Measurement& m, const std::string& file, const std::string& where) {
  if (m.result.ok())
    if (auto problem = runtime_problem(m.result.seconds)) throw InputError(file, where, "a valid runtime, but " + *problem);
  if (auto problem = cost_problem(m.result.cost_seconds)) throw InputError(file, where, "a valid cost, but " + *problem);
}

}  // namespace

void check_corpus_values(const Corpus& corpus) {
  for (const auto& program : corpus.programs) check_program(*program, corpus.path, "program '" + program->name() + "'");
  for (std::size_t i = 0; i < corpus.program_measurements.size(); ++i)
    check_measurement(corpus.program_measurements[i], corpus.path, "program measurement " + std::to_string(i));
  for (const MeasuredKernel& kernel : corpus.kernels) {
    const std::string where = "kernel '" + kernel.kernel.name() + "'";
    check_program(kernel.kernel.body(), corpus.path, where);
    for (std::size_t i = 0; i < kernel.measurements.size(); ++i) {
      const std::string place = where + ", measurement " + std::to_string(i);
      check_measurement(kernel.measurements[i], corpus.path, place);
      if (kernel.space)
        if (auto problem = config_problem(*kernel.space, kernel.measurements[i].config)) throw InputError(corpus.path, place, *problem);
    }
  }
}

Corpus single_kernel_corpus(std::string format, std::string path, MeasuredKernel kernel) {
  Corpus corpus;
  corpus.format = std::move(format);
  corpus.path = std::move(path);
  corpus.kernels.push_back(std::move(kernel));
  return corpus;
}

}  // namespace perftune
