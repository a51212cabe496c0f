#include "surrogate/training/program_sum_sampler.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>

#include "surrogate/evaluation/model_evaluation.h"

namespace perftune {

ProgramSampler::ProgramSampler(const ProgramTraining& training) {
  for (const MeasuredKernel* program : training.programs) {
    auto [configs, seconds] = ok_configs(*program);
    if (configs.size() < 2) continue;
    Program p{std::make_unique<ProgramKernels>(*program, training.tiling), std::move(configs), {}};
    for (double s : seconds) p.log_seconds.push_back(static_cast<float>(std::log(s)));
    programs_.push_back(std::move(p));
  }
}

GnnCostModel::State::SumGroup ProgramSampler::sample(std::size_t placements, Rng& rng) {
  Program& program = programs_[uniform_index(rng, programs_.size())];
  std::vector<std::size_t> order(program.configs.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  // The first `drawn` entries of a partial Fisher-Yates shuffle: distinct placements, each equally likely.
  const std::size_t drawn = std::min(placements, order.size());
  for (std::size_t i = 0; i < drawn; ++i) std::swap(order[i], order[i + uniform_index(rng, order.size() - i)]);
  order.resize(drawn);
  GnnCostModel::State::SumGroup group;
  std::map<std::pair<std::size_t, Config>, std::size_t> term_of;  // (kernel, schedule) -> group.terms
  for (std::size_t i : order) {
    std::vector<std::size_t> terms;
    try {
      for (ProgramKernels::Term& term : program.kernels->terms(program.configs[i])) {
        auto [it, added] = term_of.try_emplace({term.kernel, term.schedule}, group.terms.size());
        if (added)
          group.terms.push_back({&program.kernels->kernel(term.kernel), &program.kernels->space(term.kernel), std::move(term.schedule)});
        terms.push_back(it->second);
      }
    } catch (const FusionError&) {
      continue;  // a placement that does not partition has no sum to train on
    }
    group.placements.push_back(std::move(terms));
    group.log_seconds.push_back(program.log_seconds[i]);
  }
  return group;
}

}  // namespace perftune
