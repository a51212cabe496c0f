#include <catch2/catch.hpp>

#include "ir/fusion.h"
#include "ir/fusion_placements.h"
#include "ir/knob_roles.h"
#include "ir/program_json.h"
#include "test_support.h"

using namespace perftune;

namespace {

Op make_op(const std::string& name, const std::string& opcode, std::int64_t parameter_number = -1) {
  Op op{.name = name, .opcode = opcode, .shape = make_shape(ElementType::kF32, {16, 8})};
  op.parameter_number = parameter_number;
  return op;
}

// p -> a; a -> b; a -> c; b -> c. Edge ids: 0 p->a, 1 a->b, 2 a->c, 3 b->c.
Program diamond() {
  Program program("diamond");
  const OpId p = program.add_op(make_op("p", "parameter", 0));
  const OpId a = program.add_op(make_op("a", "exponential"), {p});
  const OpId b = program.add_op(make_op("b", "negate"), {a});
  program.add_op(make_op("c", "add"), {a, b});
  return program;
}

FusionConfig fuse(const Program& program, std::vector<std::size_t> edges) {
  FusionConfig config = FusionConfig::none(program);
  for (std::size_t e : edges) config.fused[e] = true;
  return config;
}

// The kernel body's edge id from producer `from` to consumer `to`.
std::size_t edge_between(const Program& body, const std::string& from, const std::string& to) {
  for (std::size_t e = 0; e < body.edges().size(); ++e)
    if (body.op(body.edges()[e].producer).name == from && body.op(body.edges()[e].consumer).name == to) return e;
  FAIL("no edge " << from << " -> " << to);
  return 0;
}

}  // namespace

TEST_CASE("no fusion: one kernel per non-parameter op, in dependence order") {
  const Program program = diamond();
  const FusionPlan plan = partition(program, FusionConfig::none(program));
  REQUIRE(plan.kernels.size() == 3);
  REQUIRE(plan.kernel_of_op[0] == -1);  // the parameter is an input, not work
  REQUIRE(plan.kernels[0].members == std::vector<OpId>{1});
  REQUIRE(plan.kernels[0].inputs == std::vector<OpId>{0});
  REQUIRE(plan.kernels[2].members == std::vector<OpId>{3});
  REQUIRE(plan.kernels[2].inputs.size() == 2);  // a and b reach c from outside its kernel
}

TEST_CASE("all fusible edges fused: one kernel reading the parameter") {
  const Program program = diamond();
  REQUIRE(fusible_edges(program) == std::vector<std::size_t>{1, 2, 3});
  const FusionPlan plan = partition(program, fuse(program, {1, 2, 3}));
  REQUIRE(plan.kernels.size() == 1);
  REQUIRE(plan.kernels[0].members == std::vector<OpId>{1, 2, 3});
  REQUIRE(plan.kernels[0].inputs == std::vector<OpId>{0});
  REQUIRE(plan.kernels[0].outputs == std::vector<OpId>{3});
  REQUIRE(plan.kernels[0].kernel.parameters().size() == 1);
}

TEST_CASE("greedy elementwise fusion fuses the elementwise consumers") {
  const Program program = diamond();
  REQUIRE(FusionConfig::greedy_elementwise(program) == fuse(program, {1, 2, 3}));
}

TEST_CASE("a partition whose kernels would form a cycle is rejected") {
  // a and c fused, b not: {a,c} -> b -> {a,c}.
  const Program program = diamond();
  const FusionConfig config = fuse(program, {2});
  REQUIRE_FALSE(is_legal(program, config));
  REQUIRE(fusion_cycle(program, fusion_groups(program, config)).has_value());
  REQUIRE_THROWS_AS(partition(program, config), FusionError);
  // Fusing b with them too makes it legal again.
  REQUIRE(is_legal(program, fuse(program, {1, 2})));
}

TEST_CASE("fusion configs that do not fit the program are rejected") {
  const Program program = diamond();
  REQUIRE_THROWS_AS(partition(program, FusionConfig{{true}}), FusionError);
  REQUIRE_THROWS_WITH(partition(program, fuse(program, {0})), Catch::Contains("parameter"));
}

TEST_CASE("kernels of the same structure share a key across partitions and programs") {
  const Program program = load_program_file(source_path("configs/programs/mlp_block_small.json"));
  const FusionPlan none = partition(program, FusionConfig::none(program));
  const FusionPlan greedy = partition(program, FusionConfig::greedy_elementwise(program));
  REQUIRE(greedy.kernels.size() < none.kernels.size());
  // Every op is in exactly one kernel.
  std::size_t members = 0;
  for (const auto& k : greedy.kernels) members += k.members.size();
  std::size_t work = 0;
  for (OpId id = 0; id < program.size(); ++id) work += program.op(id).is_parameter() ? 0 : 1;
  REQUIRE(members == work);
  const Program again = load_program_file(source_path("configs/programs/mlp_block_small.json"));
  const FusionPlan greedy_again = partition(again, FusionConfig::greedy_elementwise(again));
  for (std::size_t i = 0; i < greedy.kernels.size(); ++i) REQUIRE(greedy.kernels[i].kernel.key() == greedy_again.kernels[i].kernel.key());
}

TEST_CASE("a fused kernel's placements are its program config's, edge by edge") {
  const Program program = diamond();
  // Placements of a -> b, a -> c and b -> c: b inlined into c, a computed per tile of both.
  const SearchSpace program_space({{fuse_knob(1), {0, 1, 2}}, {fuse_knob(2), {0, 1, 2}}, {fuse_knob(3), {0, 1, 2}}});
  const Config program_config{{2, 2, 1}};
  FusionConfig fused = FusionConfig::none(program);
  fused.fused[1] = fused.fused[2] = fused.fused[3] = true;
  const FusionPlan plan = partition(program, fused);
  REQUIRE(plan.kernels.size() == 1);
  const Kernel& kernel = plan.kernels.front().kernel;
  const Program& body = kernel.body();
  const std::size_t ab = edge_between(body, "a", "b"), ac = edge_between(body, "a", "c"), bc = edge_between(body, "b", "c");
  const SearchSpace kernel_space({{tile_out_knob(0), {1, 16}}, {fuse_knob(bc), {0, 1, 2}}, {fuse_knob(ab), {0, 1, 2}}, {fuse_knob(ac), {0, 1, 2}}});
  const Config base{{16, 0, 0, 0}};
  REQUIRE(with_program_placements(kernel, kernel_space, base, program, program_space, program_config) == Config{{16, 1, 2, 2}});
  // A placement the kernel's space does not allow leaves the base schedule.
  const SearchSpace narrow({{tile_out_knob(0), {1, 16}}, {fuse_knob(bc), {0, 2}}, {fuse_knob(ab), {0, 1, 2}}, {fuse_knob(ac), {0, 1, 2}}});
  CHECK(with_program_placements(kernel, narrow, base, program, program_space, program_config) == base);
  // A kernel space without fuse knobs, or a program config that places nothing: the base.
  const SearchSpace tiles_only({{tile_out_knob(0), {1, 16}}});
  CHECK(with_program_placements(kernel, tiles_only, Config{{1}}, program, program_space, program_config) == Config{{1}});
  const SearchSpace untouched({{tile_out_knob(0), {4, 8}}});
  CHECK(with_program_placements(kernel, kernel_space, base, program, untouched, Config{{4}}) == base);
}
