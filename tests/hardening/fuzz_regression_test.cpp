// Inputs the fuzzers found that broke a parser, reduced, each kept as a regression test: the
// parser must raise InputError naming the file and place, never crash or throw anything else.
#include <fstream>

#include <catch2/catch.hpp>

#include "ir/input_error.h"
#include "ir/json_view.h"
#include "ir/record_log.h"
#include "ir/source.h"
#include "surrogate/study/study_config.h"
#include "test_support.h"

namespace perftune {
namespace {

// fuzz_record_log, 150 s in: a number beyond double's range made nlohmann::json throw
// out_of_range (not parse_error), which escaped RecordLog::load and aborted the process.
TEST_CASE("a record log with a number beyond double's range is an input error naming the line") {
  const std::string path = scratch_dir("hardening_fuzz_regression") + "/overflow.jsonl";
  const std::string number = GENERATE(as<std::string>{}, "1.36e314", "-1e400", "1e99999");
  CAPTURE(number);
  std::ofstream(path) << R"({"v":1,"type":"record","device":"tpu","kernel":"9f2c1e0a77d3b6a1","name":"k","config":{"a":1},)"
                      << R"("status":"ok","seconds":1e-4,"spread":0,"repeats":[)" << number << R"(],"cost":0.25,"message":"","time":1})"
                      << "\n"
                      << R"({"v":1,"type":"record"})" << "\n";
  try {
    RecordLog::load(path);
    FAIL("accepted an out-of-range number");
  } catch (const InputError& error) {
    CHECK(error.file() == path);
    CHECK(error.place() == "line 1");
  }
}

TEST_CASE("a JSON document with a number beyond double's range is an input error") {
  try {
    parse_json_text(R"({"budget": {"measurements": 1e400}})", "campaign.json");
    FAIL("accepted an out-of-range number");
  } catch (const InputError& error) {
    CHECK(error.file() == "campaign.json");
    CHECK_THAT(error.what(), Catch::Contains("double's range") && Catch::Contains("1e400"));
  }
}

// fuzz_study_config, session 3: a source path longer than the system allows (NAME_MAX) made
// std::filesystem::exists throw filesystem_error ("File name too long") out of StudyConfig::load.
// A path the system cannot look up is now a missing file, reported with its place.
TEST_CASE("a path too long for the system is a missing file named with its place, not a crash") {
  const std::string dir = scratch_dir("hardening_fuzz_long_path");
  const std::string too_long(5000, 'x');
  const std::string config = dir + "/study.json";
  std::ofstream(config) << R"({"sources": [")" << too_long << R"(.jsonl"], "split": {"by": "kernel"}})";
  try {
    StudyConfig::load(config);
    FAIL("accepted a source that cannot exist");
  } catch (const InputError& error) {
    CHECK(error.file() == config);
    CHECK(error.place() == "$.sources[0]");
  }
  CHECK_THROWS_AS(load_source(dir + "/" + too_long + ".jsonl"), InputError);
}

}  // namespace
}  // namespace perftune
