#include "hardware/halide/cpu_program.h"

#include "ir/corpus.h"
#include "ir/input_error.h"
#include "ir/program_json.h"
#include "ir/source.h"

namespace perftune {

Program load_cpu_program(const std::string& path) {
  if (path.ends_with(".json")) return load_program_file(path);
  const Corpus corpus = load_source(path);
  if (corpus.programs.empty()) throw InputError(path, "", "a program JSON or a source holding a program; it holds none");
  Program program = *corpus.programs.front();
  for (OpId id = 0; id < program.size(); ++id) program.mutable_op(id).shape.element_type = ElementType::kF32;
  return program;
}

std::optional<Kernel> find_partition_kernel(const Program& program, const FusionConfig& fusion, const std::string& name,
                                            std::string* available) {
  std::string names;
  for (FusedKernel& fused : partition(program, fusion).kernels) {
    if (fused.kernel.name() == name || fused.kernel.key() == name) return std::move(fused.kernel);
    if (names.size() < 2000) names += (names.empty() ? "" : ", ") + fused.kernel.name();
  }
  if (available) *available = std::move(names);
  return std::nullopt;
}

}  // namespace perftune
