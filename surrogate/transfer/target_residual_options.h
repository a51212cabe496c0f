#pragma once
// The options of a TargetResidualModel (target_residual.h), torch-free: a campaign's model spec
// holds them as parsed (autotuner/factories/model_spec.h), and the parser builds without libtorch.
#include <cstddef>

namespace perftune {

// How a round's batch is chosen among the proposals (target_residual.h says how each works).
enum class BatchChoice { kTop, kThompson };

struct TargetResidualOptions {
  // Pass update() on to the prior as well (a learned prior then fine-tunes its weights as
  // without the residual). Off: the prior stays as trained and only the residual learns.
  bool fine_tune_prior = false;
  // Points kept per kernel, the most recent ones (each update costs O(n^3) per grid point); 512
  // is 2.5x the largest budget of the bundled experiments.
  std::size_t max_points = 512;
  // kappa of the lower confidence bound mean - kappa * sd on log seconds; 0: the mean alone.
  double exploration = 0.0;
  BatchChoice batch = BatchChoice::kTop;
  std::size_t batch_pool = 10;        // kThompson: proposals asked per batch slot (>= 1)
  std::size_t source_favourites = 0;  // kThompson: each prior's own best scored configs added per round
  // kThompson: each further slot also draws the GP residual jointly at the candidates (full batch
  // Thompson sampling) instead of taking its mean minus the exploration bonus.
  bool sample_residual = false;
  // kThompson: the candidates also hold every unmeasured config one knob away (any value of that
  // knob) from each of the kernel's incumbent_neighbours best measured configs, so the batch can
  // step off the target's own best configs (a local search the priors need not point to: the
  // sources' favourites can all be slower on the target than a neighbour of its incumbent).
  std::size_t incumbent_neighbours = 0;
  // kThompson: after the first slot, this many slots take the best of those neighbours by the
  // lower confidence bound (a model-ordered local search: once the incumbent settles, its whole
  // neighbourhood gets measured, so the result is a one-knob local optimum of the target; the
  // differences there, often under 1%, are finer than the priors or a Thompson draw resolve).
  std::size_t local_slots = 0;
  // Fit a relevance per knob by the marginal likelihood (ResidualFit::relevance) once there are 3
  // points per knob; off: one isotropic length scale.
  bool relevance = false;
  // With relevance: each knob's distance may also be categorical (any two different values one
  // unit apart), chosen per knob by the same likelihood. An ordered distance says a measurement
  // informs the neighbouring values most; where the target's runtimes jump between neighbouring
  // values (convolution/A100's fast block widths 48 and 112 among slow 32, 64 and 128), it blurs
  // what was measured at one value over the others, and a category keeps it to that value.
  bool categorical = false;
  // Until the kernel's first fit (two successful measurements), choose the batch by greedy maximin
  // distance in the knob-index cube among the proposals and as many random configs, away from what
  // is measured: with no prior (surrogate/transfer/flat_prior.h) every config scores the same, and a first
  // batch spread over the space tells the GP most about it.
  bool space_filling_start = false;
};

}  // namespace perftune
