// A live sitting's machine checks: appended one line each, read back in order, a torn last line
// (a kill while writing) left out, any other bad line named.
#include "offline/machine_check.h"

#include <fstream>

#include "ir/input_error.h"
#include "test_support.h"

namespace perftune {
namespace {

MachineCheck made_up(const std::string& phase, double flops) {
  MachineCheck check;
  check.phase = phase;
  check.unix_seconds = 1.8e9;
  check.threads = 2;
  check.fma_flops_one_core = flops;
  check.fma_flops_threads = 2 * flops;
  check.triad_bandwidth_threads = 3e10;
  return check;
}

TEST_CASE("machine checks are appended and read back in order; a torn last line is left out", "[experiments]") {
  const std::string file = scratch_dir("machine_checks") + "/machine_checks.jsonl";
  REQUIRE(read_machine_checks(file).empty());
  append_machine_check(file, made_up("runs", 1e11));
  append_machine_check(file, made_up("remeasure", 5e10));
  std::ofstream(file, std::ios::app) << R"({"phase": "runs", "fma_fl)";
  const auto checks = read_machine_checks(file);
  REQUIRE(checks.size() == 2);
  CHECK(checks[0]["phase"] == "runs");
  CHECK(checks[1]["fma_flops_one_core"] == 5e10);
  CHECK(checks[1]["fma_flops_threads"] == 1e11);
  CHECK(describe(made_up("runs", 1.18e11)) == "FMA 118 GFLOP/s on 1 core, 236 on 2; triad 30.0 GB/s");
}

TEST_CASE("checks whose FMA rates differ by over a fifth say the sittings ran on different machines", "[experiments]") {
  nlohmann::ordered_json checks = nlohmann::ordered_json::array({made_up("runs", 1.18e11).to_json(), made_up("remeasure", 1.182e11).to_json()});
  CHECK_FALSE(machines_differ(checks));
  CHECK_FALSE(machines_differ(nlohmann::ordered_json::array()));
  checks.push_back(made_up("runs", 2.36e11).to_json());
  const auto warning = machines_differ(checks);
  REQUIRE(warning);
  CHECK(*warning == "the sittings ran on different machines (fma_flops_one_core from 118 to 236 GFLOP/s): figures from different "
                    "sittings do not compare");
}

TEST_CASE("a line that is not a machine check is named by file and line", "[experiments]") {
  const std::string file = scratch_dir("machine_checks_bad") + "/machine_checks.jsonl";
  append_machine_check(file, made_up("runs", 1e11));
  std::ofstream(file, std::ios::app) << "{\"phase\": \"runs\"}\n";
  append_machine_check(file, made_up("runs", 1e11));
  REQUIRE_THROWS_AS(read_machine_checks(file), InputError);
  REQUIRE_THROWS_WITH(read_machine_checks(file), Catch::Contains("line 2"));
}

TEST_CASE("a machine check times the three benchmarks", "[experiments]") {
  const MachineCheck check = check_machine("runs", 1, 0.02);
  CHECK(check.threads == 1);
  CHECK(check.fma_flops_one_core > 1e8);
  CHECK(check.fma_flops_threads > 1e8);
  CHECK(check.triad_bandwidth_threads > 1e7);
  CHECK(check.unix_seconds > 1.7e9);
}

}  // namespace
}  // namespace perftune
