// perftune settings through the real binary: the whole reference, one section, an unknown one.
#include "cli_test_support.h"

namespace perftune {
namespace {

TEST_CASE("perftune settings prints the reference, or the sections a word names", "[cli][settings]") {
  const auto all = perftune_cli({"settings"});
  CAPTURE(all.err);
  REQUIRE(all.exit_code == 0);
  CHECK(all.out.find("## Strategies") != std::string::npos);
  CHECK(all.out.find("`search_time_share`") != std::string::npos);
  const auto evolution = perftune_cli({"settings", "evolution"});
  REQUIRE(evolution.exit_code == 0);
  CHECK(evolution.out.rfind("### `evolution`", 0) == 0);
  CHECK(evolution.out.find("`population`") != std::string::npos);
  CHECK(evolution.out.find("`chains`") == std::string::npos);  // annealing's, another section
  const auto unknown = perftune_cli({"settings", "no_such_thing"});
  CHECK(unknown.exit_code == 1);
  CHECK(unknown.err == "perftune settings: error: no section of the settings names \"no_such_thing\" (see perftune settings)\n");
}

}  // namespace
}  // namespace perftune
