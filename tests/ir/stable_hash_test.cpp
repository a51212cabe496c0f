#include <catch2/catch.hpp>

#include <filesystem>
#include <stdexcept>

#include "ir/file_io.h"
#include "ir/stable_hash.h"
#include "test_support.h"

using namespace perftune;

TEST_CASE("stable_hash is 64-bit FNV-1a: the reference test vectors") {
  // From the FNV reference's test suite (isthe.com/chongo/src/fnv/test_fnv.c, FNV-1a 64).
  const auto [text, expected] = GENERATE(table<std::string, std::uint64_t>({
      {"", 0xcbf29ce484222325ULL},
      {"a", 0xaf63dc4c8601ec8cULL},
      {"foobar", 0x85944171f73967e8ULL},
  }));
  CAPTURE(text);
  REQUIRE(stable_hash(text) == expected);
}

TEST_CASE("stable_hash_hex gives the hash's low digits, zero-padded") {
  REQUIRE(stable_hash_hex("a") == "af63dc4c8601ec8c");
  REQUIRE(stable_hash_hex("a", 8) == "8601ec8c");
  REQUIRE(stable_hash_hex("foobar", 1) == "8");
  REQUIRE_THROWS_AS(stable_hash_hex("a", 0), std::invalid_argument);
  REQUIRE_THROWS_AS(stable_hash_hex("a", 17), std::invalid_argument);
}

TEST_CASE("write_file_atomically replaces a file whole and names the file it cannot write") {
  const std::string dir = scratch_dir("write_file_atomically");
  const std::string path = dir + "/state.json";
  write_file_atomically(path, "old\n");
  write_file_atomically(path, "new\n");
  REQUIRE(read_file(path) == "new\n");
  REQUIRE_FALSE(std::filesystem::exists(path + ".tmp"));
  try {
    write_file_atomically(dir + "/no/such/folder/state.json", "x");
    FAIL("wrote into a missing folder");
  } catch (const std::runtime_error& error) {
    REQUIRE_THAT(error.what(), Catch::Contains("no/such/folder/state.json.tmp"));
  }
}
