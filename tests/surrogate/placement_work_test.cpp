// The analytical model's view of producer placements inside a multi-op kernel: inlining a
// reduction into a broadcast recomputes it per element; placing it at root costs a round trip.
#include "surrogate/analytical/placement_work.h"

#include "ir/json_view.h"
#include "ir/knob_roles.h"
#include "ir/program_json.h"
#include "ir/search_space.h"
#include "surrogate/analytical/analytical_model.h"
#include "test_support.h"

using namespace perftune;

namespace {

// centered = x - broadcast(sum over rows of x): 256 x 128.
Program centering() {
  const nlohmann::json json = nlohmann::json::parse(R"({"name": "center", "ops": [
    {"name": "x", "opcode": "parameter", "type": "f32", "shape": [256, 128], "parameter_number": 0},
    {"name": "sum", "opcode": "reduce", "type": "f32", "shape": [128], "operands": ["x"], "dimensions": [0]},
    {"name": "sum_b", "opcode": "broadcast", "type": "f32", "shape": [256, 128], "operands": ["sum"], "dimensions": [1]},
    {"name": "centered", "opcode": "subtract", "type": "f32", "shape": [256, 128], "operands": ["x", "sum_b"]}]})");
  return program_from_json(JsonView(json, "centering"));
}

// Tiles of the output and a placement knob per edge, every producer placed `placement`, the
// reduction's edge `reduction`.
std::pair<SearchSpace, Config> placed(const Program& body, std::int64_t placement, std::int64_t reduction) {
  std::vector<Knob> knobs = {{tile_out_knob(0), {8, 256}}, {tile_out_knob(1), {128}}};
  Config config{{8, 128}};
  for (std::size_t e = 0; e < body.edges().size(); ++e) {
    knobs.push_back({fuse_knob(e), {0, 1, 2}});
    config.values.push_back(body.op(body.edges()[e].producer).name == "sum" ? reduction : placement);
  }
  return {SearchSpace(knobs), config};
}

}  // namespace

TEST_CASE("an inlined reduction under a broadcast is recomputed per element; one at root costs a round trip") {
  const Program body = centering();
  const auto [space, tiled] = placed(body, 2, 2);
  const auto roles = knob_roles(space);
  const PlacementWork at_tile = placement_work(body, roles, tiled);
  CHECK(at_tile.recompute == Approx(1.0));
  CHECK(at_tile.root_bytes == 0.0);
  // Inlined, the 256-row sum runs again for each of the broadcast's 256 x 128 elements: the
  // kernel's flops (256 x 128 sums + 256 x 128 subtracts) become 256 x 128 x 255 + 256 x 128.
  const PlacementWork inlined = placement_work(body, roles, placed(body, 2, 1).second);
  CHECK(inlined.recompute == Approx((256.0 * 128 * 255 + 256.0 * 128) / (255.0 * 128 + 256.0 * 128)));
  const PlacementWork root = placement_work(body, roles, placed(body, 0, 0).second);
  CHECK(root.recompute == Approx(1.0));
  CHECK(root.root_bytes == 2.0 * (128 * 4 + 256 * 128 * 4));  // the sum and its broadcast, written and read back

  // The analytical model ranks them so: the inlined reduction far slower than the tiled one.
  AnalyticalModel model(load_device_spec(source_path("configs/hardware/host.json")));
  const Kernel kernel("center", body);
  const std::vector<Config> configs = {tiled, placed(body, 2, 1).second};
  std::vector<float> log_seconds(2);
  model.predict(kernel, space, configs, log_seconds);
  CHECK(log_seconds[1] > log_seconds[0] + std::log(5.0f));
}
