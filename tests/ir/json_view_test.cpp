// JSON readers' messages: each says what was found and what was expected, at its place.
#include <catch2/catch.hpp>

#include <filesystem>

#include "ir/file_io.h"
#include "ir/input_error.h"
#include "ir/json_view.h"
#include "test_support.h"

using namespace perftune;

namespace {

std::int64_t int_of(const std::string& text) {
  const nlohmann::json json = parse_json_text(R"({"n": )" + text + "}", "x.json");
  return JsonView(json, "x.json").at("n").as_int();
}

}  // namespace

TEST_CASE("integers: exponent notation is read exactly, out-of-range values say so") {
  CHECK(int_of("1e12") == 1'000'000'000'000);
  CHECK(int_of("9223372036854775807") == INT64_MAX);
  CHECK_THROWS_WITH(int_of("1e300"), Catch::Contains("x.json: $.n") && Catch::Contains("at most 2^53") && !Catch::Contains("fraction"));
  CHECK_THROWS_WITH(int_of("9223372036854775808"), Catch::Contains("below 2^63") && !Catch::Contains("non-negative"));
  CHECK_THROWS_WITH(int_of("2.5"), Catch::Contains("fraction"));
  CHECK_THROWS_WITH(int_of("\"3\""), Catch::Contains("an integer, found a string"));
}

TEST_CASE("NaN and Infinity are named, not reported as the letter N") {
  for (const char* text : {R"({"a": NaN})", R"({"a": Infinity})", R"({"a": -Infinity})"}) {
    CAPTURE(text);
    CHECK_THROWS_WITH(parse_json_text(text, "x.json"), Catch::Contains("x.json: line 1") && Catch::Contains("no NaN or Infinity"));
  }
}

TEST_CASE("a key twice in one object is an error, in any JSON reader") {
  CHECK_THROWS_WITH(parse_json_text(R"({"a": {"b": 1, "b": 0}})", "x.json"), Catch::Contains("x.json") && Catch::Contains("\"b\" appears twice"));
  CHECK_NOTHROW(parse_json_text(R"({"a": {"b": 1}, "c": {"b": 0}, "d": [{"b": 1}, {"b": 2}]})", "x.json"));
}

TEST_CASE("a folder where a file is expected is named as such, not as empty JSON") {
  const std::string dir = scratch_dir("json_folder") + "/x.json.gz";
  std::filesystem::create_directories(dir);
  CHECK_THROWS_WITH(parse_json_file(dir), Catch::Contains("x.json.gz: a file, but this is a folder"));
  CHECK_THROWS_WITH(read_maybe_gzip(dir), Catch::Contains("a folder"));
}
