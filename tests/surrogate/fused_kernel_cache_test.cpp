#include <catch2/catch.hpp>

#include "ir/program_json.h"
#include "ir/random.h"
#include "op_builders.h"
#include "surrogate/fusion/fused_kernel_cache.h"
#include "test_support.h"

using namespace perftune;

namespace {

// Legal fusion configs of `program`: each fusible edge fused with probability 1/2, seeded; a
// config with a cycle is dropped (partition() would refuse it).
std::vector<FusionConfig> random_fusions(const Program& program, std::size_t count, std::uint64_t seed) {
  Rng rng(seed);
  std::vector<FusionConfig> out;
  while (out.size() < count) {
    FusionConfig fusion = FusionConfig::none(program);
    for (std::size_t e : fusible_edges(program)) fusion.fused[e] = uniform_index(rng, 2) == 1;
    if (is_legal(program, fusion)) out.push_back(fusion);
  }
  return out;
}

}  // namespace

TEST_CASE("the fused-kernel cache gives partition()'s kernels in partition()'s order") {
  const auto file = GENERATE("mlp_block_small", "conv_block_small", "transformer_block_small");
  CAPTURE(file);
  const Program program = load_program_file(source_path(std::string("configs/programs/") + file + ".json"));
  FusedKernelCache cache(program);
  const auto fusions = random_fusions(program, 40, 5);
  for (std::size_t c = 0; c < fusions.size(); ++c) {
    CAPTURE(c);
    const FusionPlan plan = partition(program, fusions[c]);
    const std::vector<std::size_t> kernels = cache.kernels(fusions[c]);
    REQUIRE(kernels.size() == plan.kernels.size());
    for (std::size_t k = 0; k < kernels.size(); ++k) {
      REQUIRE(cache.kernel(kernels[k]).key() == plan.kernels[k].kernel.key());
      REQUIRE(cache.kernel(kernels[k]).name() == plan.kernels[k].kernel.name());
    }
  }
  // Configs share kernels, so fewer were built than the configs hold; asking again builds none.
  std::size_t held = 0;
  for (const FusionConfig& fusion : fusions) held += partition(program, fusion).kernels.size();
  const std::size_t built = cache.size();
  REQUIRE(built < held);
  for (const FusionConfig& fusion : fusions) (void)cache.kernels(fusion);
  REQUIRE(cache.size() == built);
}

TEST_CASE("the fused-kernel cache refuses what partition() refuses") {
  // x -> a -> b -> c, and a -> c: fusing a->c alone puts b between two halves of one kernel.
  Program program;
  const OpId x = program.add_op(test::parameter("x", 0, test::f32({8})));
  const OpId a = program.add_op(test::make_op("a", "exponential", test::f32({8})), {x});
  const OpId b = program.add_op(test::make_op("b", "negate", test::f32({8})), {a});
  program.add_op(test::make_op("c", "add", test::f32({8})), {a, b});
  FusedKernelCache cache(program);
  FusionConfig cycle = FusionConfig::none(program);
  for (std::size_t e = 0; e < program.edges().size(); ++e)
    cycle.fused[e] = program.edges()[e].producer == a && program.op(program.edges()[e].consumer).name == "c";
  REQUIRE_THROWS_AS(partition(program, cycle), FusionError);
  REQUIRE_THROWS_AS(cache.kernels(cycle), FusionError);
  REQUIRE_THROWS_AS(cache.kernels(FusionConfig{{true}}), FusionError);  // wrong length
  REQUIRE(cache.kernels(FusionConfig::none(program)).size() == 3);
}
