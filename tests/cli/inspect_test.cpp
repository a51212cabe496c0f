// perftune inspect through the real binary: one line of its own for a corrupt file, warnings for
// what a record log repaired.
#include <fstream>

#include "cli_test_support.h"

namespace perftune {
namespace {

TEST_CASE("inspect of a corrupt .pb prints perftune's one line, not protobuf's log first", "[cli][inspect]") {
  const std::string path = scratch_dir("inspect_pb") + "/corrupt.pb";
  // Field 1 (a TuningData module), length 5, then bytes that are no ModuleTuningData.
  std::ofstream(path, std::ios::binary) << std::string("\x0a\x05\xff\xff\xff\xff\xff", 7);
  const auto r = perftune_cli({"inspect", path});
  CAPTURE(r.err);
  CHECK(r.exit_code == 1);
  CHECK(r.err.rfind("perftune inspect: error: " + path, 0) == 0);
  CHECK(r.err.find("libprotobuf") == std::string::npos);
  CHECK(r.err.find('\n') == r.err.size() - 1);
}

TEST_CASE("inspect warns of a torn last line and merged duplicates", "[cli][inspect]") {
  const std::string path = scratch_dir("inspect_log") + "/log.jsonl";
  const std::string record =
      R"({"v":1,"type":"record","device":"d","kernel":"k","name":"k","config":{"a":1},"status":"ok","seconds":0.001,"cost":0.1})";
  std::ofstream(path) << record << "\n" << record << "\n" << record.substr(0, 30);
  const auto r = perftune_cli({"inspect", path});
  CAPTURE(r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.err.find("perftune inspect: " + path + ": line 3: dropped a torn last line") != std::string::npos);
  CHECK(r.err.find("merged 1 duplicate record(s)") != std::string::npos);
}

TEST_CASE("tune with --output naming a file says so in one line", "[cli][tune]") {
  const std::string dir = scratch_dir("tune_output_file");
  std::ofstream(dir + "/out") << "x";
  const auto r = perftune_cli({"tune", source_path("configs/campaigns/gemm_titan_rtx_random.json"), "--output", dir + "/out"});
  CAPTURE(r.err);
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("the output folder " + dir + "/out is a file") != std::string::npos);
  CHECK(r.err.find("filesystem error") == std::string::npos);
}

}  // namespace
}  // namespace perftune
