#pragma once
// The sum groups a training step draws from programs measured under fusion placements
// (TrainOptions::program_weight): a few placements of one program, each as the kernels it runs.
// Includes libtorch (through gnn_state.h): surrogate/ only.
#include <memory>
#include <vector>

#include "ir/random.h"
#include "surrogate/fusion/program_kernels.h"
#include "surrogate/gnn/gnn_state.h"

namespace perftune {

class ProgramSampler {
 public:
  // Keeps the programs with at least two successful placements; `training` must outlive this.
  explicit ProgramSampler(const ProgramTraining& training);

  bool empty() const { return programs_.empty(); }
  std::size_t size() const { return programs_.size(); }
  // `placements` successful placements of a random program (all if it has fewer), drawn without
  // replacement, with their kernels' schedules; a kernel schedule two placements share is one term.
  // The group's pointers are valid for the life of this sampler.
  GnnCostModel::State::SumGroup sample(std::size_t placements, Rng& rng);

 private:
  struct Program {
    std::unique_ptr<ProgramKernels> kernels;
    std::vector<Config> configs;     // successful placements
    std::vector<float> log_seconds;  // their measured log runtimes
  };
  std::vector<Program> programs_;
};

}  // namespace perftune
