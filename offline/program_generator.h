#pragma once
// Random tensor programs for a training corpus, seeded and reproducible: program `i` of a spec
// depends only on (seed, i), so a corpus can be generated in pieces, on several machines, or
// again. A program is a chain of blocks over one running value, as models are built: on an image
// (NHWC, or an NDHWC volume as in 3-D networks) convolutions, pooling windows, batch-norm statistics, residual blocks and a global pool
// that turns it into a matrix; on a matrix dense layers, layer norms, softmaxes, single-head
// attention, transposes, residual dense layers; elementwise chains and activations on both. Every
// program passes the same validation as a hand-written one (program_from_json) and is one the
// Halide backend lowers (check_supported); a draw over the size limits is redrawn.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ir/program.h"

namespace perftune {

// A value and its weight in a draw.
struct Weighted {
  std::int64_t value = 0;
  double weight = 1.0;
  bool operator==(const Weighted&) const = default;
};

struct GeneratorSpec {
  std::string name = "generated";  // programs are NAME_00000 ...
  std::string description;
  std::string file;      // where the spec was read from (for messages)
  std::string output;    // folder the programs are written to (resolved against the spec's folder)
  std::uint64_t seed = 1;
  std::uint64_t count = 300;
  std::int64_t min_blocks = 2, max_blocks = 5;
  std::int64_t max_elements = std::int64_t{1} << 20;  // per tensor
  double max_flops = 2e8;                             // per program (multiply-adds x 2)
  // How often each block is drawn where it applies (see the .cpp for what each one builds).
  std::map<std::string, double> block_weights;
  // The blocks of real networks' graphs the chain lacks: grouped_conv (depthwise or grouped,
  // sometimes dilated), concat (DenseNet), channel_split (ShuffleNet: slice, conv, concatenate), pad
  // (an explicit pad before an unpadded conv), embedding (a gather of weight rows). A block is one of
  // these with probability network_share (default 0: no draw, so older specs draw what they drew).
  double network_share = 0;
  std::map<std::string, double> network_block_weights;
  double image_share = 0.5;  // programs that start from an image (the rest from a matrix)
  double volume_share = 0;   // of those, the ones whose image is a volume (three spatial dimensions)
  double channels_first_share = 0;  // of those, the ones laid out channels first (NCHW, NCDHW)
  // The size distributions: rows of a matrix (batch x sequence), its features, an image's batch,
  // spatial extent and channels.
  std::vector<Weighted> rows, features, image_batch, spatial, channels;
};

// The defaults: every block, and sizes that cover the bundled programs' and the XLA program's.
GeneratorSpec default_generator_spec();
// A spec file: every member optional except "output"; unknown members are errors naming the file.
// "extends": another spec file (relative to this one) whose members stand for the ones this file
// leaves out, in place of default_generator_spec()'s.
GeneratorSpec load_generator_spec(const std::string& path);

struct GeneratedProgram {
  Program program;
  std::vector<std::string> blocks;  // the blocks drawn, in order ("image", "conv", ..., "dense")
  double flops = 0;
};

// Program `index` of the spec. Throws InputError naming the spec's file and limits if no valid
// program is found in a bounded number of draws (limits too tight for any block).
GeneratedProgram generate_program(const GeneratorSpec& spec, std::uint64_t index);

// The file program `index` is written to: OUTPUT/NAME_00042.json.
std::string generated_program_path(const GeneratorSpec& spec, std::uint64_t index);

}  // namespace perftune
