// perftune eval through the real binary: its results table alone on stdout.
#include <cstdlib>
#include <fstream>

#include <nlohmann/json.hpp>

#include "experiments/experiment_fixtures.h"
#include "hardware/subprocess.h"
#include "test_support.h"

namespace perftune {
namespace {

TEST_CASE("eval prints its training progress on stderr and only its results on stdout", "[cli][eval]") {
  const std::string dir = scratch_dir("cli_eval_streams");
  testing::write_toy_cache(dir + "/a.json", "GPU A", 1.0, 3);
  testing::write_toy_cache(dir + "/b.json", "GPU B", 1.3, 4);
  const nlohmann::json config = {{"sources", {dir + "/a.json", dir + "/b.json"}},
                                 {"split", {{"by", "device"}, {"test", {"GPU B"}}}},
                                 {"model", source_path("configs/models/generic_knobs.json")},
                                 {"train", {{"epochs", 2}, {"steps_per_epoch", 3}, {"kernels_per_step", 1}, {"configs_per_kernel", 16}, {"seed", 1}}},
                                 {"models", {"learned", "random"}}};
  std::ofstream(dir + "/eval.json") << config.dump();
  const char* bin = std::getenv("PERFTUNE_BIN");
  const SubprocessResult r =
      run_subprocess({bin ? bin : std::string(PERFTUNE_BINARY_DIR) + "/perftune", "eval", dir + "/eval.json"}, "", 300);
  CAPTURE(r.out, r.err);
  REQUIRE(r.ok());
  CHECK(r.out.find("epoch") == std::string::npos);  // the per-epoch training log is progress
  CHECK(r.err.find("epoch") != std::string::npos);
  CHECK(r.out.find("learned") != std::string::npos);  // the table
}

}  // namespace
}  // namespace perftune
