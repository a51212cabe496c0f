#pragma once
// The generator's size distributions and block mix, measured on real programs, so that generated
// programs resemble them (`perftune generate --derive SOURCE...` prints them as spec members):
//   image_batch, spatial, channels  from each convolution: its input's batch, spatial extents, and
//                                   input and output features (a convolution whose window is
//                                   larger than 7 is a weight gradient, whose roles are swapped:
//                                   left out)
//   rows, features                  from each dot: rows = the product of the lhs's free
//                                   dimensions, features = the rhs's free dimensions' product and
//                                   the contracted extent
//   block_weights                   from op counts: conv = convolutions, pool = reduce-windows,
//                                   batch_norm = reductions of an image (rank 4 or 5) to one dimension / 2
//                                   (mean and variance), global_pool = reductions of an image to a
//                                   matrix, dense = dots of a parameter (weights) without batch
//                                   dimensions, attention = other dots / 2, softmax =
//                                   max-reductions of a matrix,
//                                   layer_norm = sum-reductions of a matrix / 2 - softmax (a
//                                   softmax also sums), transpose = transposes, residual = adds of
//                                   two computed values of one shape, elementwise = the remaining
//                                   elementwise ops (two per conv, dense and residual block go to
//                                   those blocks) / 2; per source as shares summing to 1, then
//                                   90% of their mean plus 10% spread over every block of the
//                                   grammar, so that none is left out
//   network_share,                  grouped_conv = convolutions with feature groups (not counted as
//   network_block_weights           conv), channel_split = slices / 2 (at most the concatenates),
//                                   concat = the other concatenates, pad = pads, embedding =
//                                   gathers; network_share = those over all blocks, per source
//                                   (absent when no source has any)
//   image_share                     conv + pool + batch_norm + global_pool over those and dense +
//                                   attention + softmax + layer_norm + transpose: how many
//                                   programs start from an image rather than a matrix
//   volume_share                    convolutions with three spatial dimensions over all
//                                   convolutions: how many images are volumes (NDHWC)
// Each source (a program file or a folder of them) weighs the same, whatever its size: the XLA
// training step has thousands of ops, a bundled program a dozen. Within a source every op counts
// once, in every computation it calls (fusion bodies) but not in scalar reducer bodies.
#include <map>
#include <string>
#include <vector>

#include "ir/program.h"
#include "offline/program_generator.h"

namespace perftune {

struct ProgramStatistics {
  std::vector<Weighted> rows, features, image_batch, spatial, channels;  // ascending values, weights sum to the sources
  std::map<std::string, double> block_weights;
  double network_share = 0;
  std::map<std::string, double> network_block_weights;  // empty when network_share is 0
  double image_share = 0.5;
  double volume_share = 0;
};

// The programs of a source: a program file (anything load_source reads: the project's JSON, an
// XLA module .pb), or every *.json program in a folder. Throws InputError naming the path.
std::vector<Program> programs_of_source(const std::string& path);

ProgramStatistics program_statistics(const std::vector<std::vector<Program>>& sources);

// The statistics as the spec members they set (block_weights, image_share, {"value", "weight"} lists).
nlohmann::ordered_json statistics_json(const ProgramStatistics& statistics);

}  // namespace perftune
