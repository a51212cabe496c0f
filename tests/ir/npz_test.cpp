#include <catch2/catch.hpp>

#include <fstream>

#include "ir/file_io.h"
#include "ir/input_error.h"
#include "ir/npz.h"
#include "test_support.h"

using namespace perftune;

TEST_CASE("npy arrays of every supported dtype survive a write and a read") {
  struct Row { char kind; int size; };
  const auto row = GENERATE(Row{'i', 1}, Row{'i', 2}, Row{'i', 4}, Row{'i', 8}, Row{'u', 1}, Row{'u', 4}, Row{'u', 8}, Row{'b', 1});
  CAPTURE(row.kind, row.size);
  const std::vector<std::int64_t> values = row.kind == 'b' ? std::vector<std::int64_t>{0, 1, 1, 0, 1, 0}
                                           : row.kind == 'u' ? std::vector<std::int64_t>{0, 1, 7, 100, 3, 127}
                                                             : std::vector<std::int64_t>{-3, 0, 5, -100, 127, -128};
  const NpyArray a = NpyArray::from_ints(values, {2, 3}, row.kind, row.size);
  const NpyArray b = parse_npy(serialize_npy(a), "mem");
  REQUIRE(b.shape == std::vector<std::int64_t>{2, 3});
  REQUIRE(b.descr() == a.descr());
  for (std::size_t i = 0; i < values.size(); ++i) REQUIRE(b.as_int(i) == values[i]);
}

TEST_CASE("npz write then read keeps names, shapes and values; the header is 64-byte aligned") {
  const std::string dir = scratch_dir("npz_roundtrip");
  Npz arrays;
  arrays["x"] = NpyArray::from_floats({1.5f, -2.0f, 3.25f, 0.0f}, {2, 2});
  arrays["scalar"] = NpyArray::from_ints({42}, {});
  arrays["empty"] = NpyArray::from_ints({}, {0});
  write_npz(dir + "/a.npz", arrays);
  const Npz back = read_npz(dir + "/a.npz");
  REQUIRE(back.size() == 3);
  REQUIRE(back.at("x").as_double(2) == 3.25);
  REQUIRE(back.at("x").shape == std::vector<std::int64_t>{2, 2});
  REQUIRE(back.at("scalar").shape.empty());
  REQUIRE(back.at("scalar").as_int(0) == 42);
  REQUIRE(back.at("empty").element_count() == 0);
  REQUIRE(serialize_npy(arrays["x"]).size() % 64 == 16);  // 64-byte header + 16 data bytes
}

TEST_CASE("a deflated npz written by Python's zipfile (as numpy.savez_compressed does) is read") {
  const Npz arrays = read_npz(source_path("tests/fixtures/tpugraphs_tile_deflated.npz"));
  REQUIRE(arrays.size() == 6);
  REQUIRE(arrays.at("node_feat").shape == std::vector<std::int64_t>{3, 140});
  REQUIRE(arrays.at("node_opcode").descr() == "|u1");
  REQUIRE(arrays.at("config_runtime").as_int(1) == 200);
}

TEST_CASE("bad npy and npz input names the file, the entry and what was expected") {
  const std::string good = serialize_npy(NpyArray::from_floats({1, 2, 3}, {3}));
  struct Row { std::string bytes; const char* expected; };
  auto replace = [&](const std::string& from, const std::string& to) {
    std::string s = good;
    s.replace(s.find(from), from.size(), to);
    return s;
  };
  const auto row = GENERATE_COPY(
      Row{"not an array", "magic"}, Row{good.substr(0, good.size() - 2), "12 bytes of data"},
      Row{replace("<f4", ">f4"), "little-endian"}, Row{replace("<f4", "<U4"), "dtype"},
      Row{replace("False", "True "), "C-order"}, Row{replace("(3,)", "(4,)"), "16 bytes of data"});
  CAPTURE(row.expected);
  REQUIRE_THROWS_WITH(parse_npy(row.bytes, "bad.npy", "entry 'x.npy'"), Catch::Contains("bad.npy: entry 'x.npy'") && Catch::Contains(row.expected));

  const std::string dir = scratch_dir("npz_bad");
  Npz arrays;
  arrays["x"] = NpyArray::from_floats(std::vector<float>(100, 1.0f), {100});
  write_npz(dir + "/ok.npz", arrays);
  const std::string bytes = read_file(dir + "/ok.npz");
  REQUIRE_THROWS_WITH(parse_npz(bytes.substr(0, bytes.size() - 30), "cut.npz"), Catch::Contains("cut.npz") && Catch::Contains("truncated"));
  std::string flipped = bytes;
  flipped[200] ^= 0x55;  // inside x.npy's data
  REQUIRE_THROWS_WITH(parse_npz(flipped, "flipped.npz"), Catch::Contains("entry 'x.npy'") && Catch::Contains("CRC-32"));
}
