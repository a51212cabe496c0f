#pragma once
// The options of a TargetResidualModel (target_residual.h), torch-free: a campaign's model spec
// holds them as parsed (autotuner/factories/model_spec.h), and the parser builds without libtorch.
#include <cstddef>

namespace perftune {

struct TargetResidualOptions {
  // Pass update() on to the prior as well (a learned prior then fine-tunes its weights as
  // without the residual). Off: the prior stays as trained and only the residual learns.
  bool fine_tune_prior = false;
  // Points kept per kernel, the most recent ones (each update costs O(n^3) per grid point); 512
  // is 2.5x the largest budget of the bundled experiments.
  std::size_t max_points = 512;
  // kappa of the lower confidence bound mean - kappa * sd on log seconds; 0: the mean alone.
  double exploration = 0.0;
  // A draw of the posterior (belief(), for batch Thompson sampling) also draws the GP residual
  // jointly at the candidates (full batch Thompson sampling) instead of taking its mean minus the
  // exploration bonus.
  bool sample_residual = false;
  // Fit a relevance per knob by the marginal likelihood (ResidualFit::relevance) once there are 3
  // points per knob; off: one isotropic length scale.
  bool relevance = false;
  // With relevance: each knob's distance may also be categorical (any two different values one
  // unit apart), chosen per knob by the same likelihood. An ordered distance says a measurement
  // informs the neighbouring values most; where the target's runtimes jump between neighbouring
  // values (convolution/A100's fast block widths 48 and 112 among slow 32, 64 and 128), it blurs
  // what was measured at one value over the others, and a category keeps it to that value.
  bool categorical = false;
};

}  // namespace perftune
