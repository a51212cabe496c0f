#include <catch2/catch.hpp>

#include "ir/fusion.h"
#include "ir/fusion_placements.h"
#include "ir/knob_roles.h"
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

// The kernel body's edge id from producer `from` to consumer `to`.
std::size_t edge_between(const Program& body, const std::string& from, const std::string& to) {
  for (std::size_t e = 0; e < body.edges().size(); ++e)
    if (body.op(body.edges()[e].producer).name == from && body.op(body.edges()[e].consumer).name == to) return e;
  FAIL("no edge " << from << " -> " << to);
  return 0;
}

}  // namespace

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
