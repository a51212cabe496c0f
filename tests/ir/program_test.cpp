#include <catch2/catch.hpp>
#include <cmath>

#include "ir/fusion.h"
#include "ir/input_error.h"
#include "ir/program_json.h"
#include "test_support.h"

using namespace perftune;

TEST_CASE("program JSON round trip keeps ops, edges and the content key") {
  const Program program = load_program_file(source_path("configs/programs/mlp_block_small.json"));
  REQUIRE(program.size() == 13);
  REQUIRE(program.edges().size() == 12);
  const Program again = program_from_json(JsonView(nlohmann::json::parse(program_to_json(program).dump()), "roundtrip"));
  REQUIRE(again.size() == program.size());
  REQUIRE(content_key(again) == content_key(program));
  REQUIRE(again.op(again.root()).name == "out");
}

TEST_CASE("content key ignores names but not shapes") {
  auto make = [](const std::string& prefix, std::int64_t n) {
    Program p("p");
    Op a{.name = prefix + "a", .opcode = "parameter", .shape = make_shape(ElementType::kF32, {n})};
    a.parameter_number = 0;
    const OpId x = p.add_op(a);
    p.add_op(Op{.name = prefix + "b", .opcode = "exponential", .shape = make_shape(ElementType::kF32, {n})}, {x});
    return p;
  };
  REQUIRE(content_key(make("u", 8)) == content_key(make("v", 8)));
  REQUIRE(content_key(make("u", 8)) != content_key(make("u", 9)));
}

TEST_CASE("a cycle in a JSON program is reported with the op on it") {
  const auto json = nlohmann::json::parse(R"({"name":"loop","ops":[
      {"name":"a","opcode":"add","shape":[4],"operands":["b"]},
      {"name":"b","opcode":"add","shape":[4],"operands":["a"]}]})");
  REQUIRE_THROWS_WITH(program_from_json(JsonView(json, "loop.json")), Catch::Contains("loop.json") && Catch::Contains("cycle"));
}

TEST_CASE("bad program JSON names the path of the problem") {
  struct Row { const char* text; const char* where; };
  const auto row = GENERATE(
      Row{R"({"ops":[{"name":"a","opcode":"add","shape":[4],"operands":["nope"]}]})", "$.ops[0].operands[0]"},
      Row{R"({"ops":[{"name":"a","opcode":"add","shape":[4],"type":"f99"}]})", "$.ops[0].type"},
      Row{R"({"ops":[{"name":"a","opcode":"add","shape":[4],"colour":1}]})", "$.ops[0].colour"},
      Row{R"({"ops":[]})", "$.ops"});
  CAPTURE(row.text);
  REQUIRE_THROWS_WITH(program_from_json(JsonView(nlohmann::json::parse(row.text), "bad.json")),
                      Catch::Contains(row.where));
}

TEST_CASE("malformed JSON reports its line") {
  REQUIRE_THROWS_WITH(parse_json_text("{\n\"a\": 1,\n\"b\": ]\n}", "broken.json"), Catch::Contains("broken.json: line 3"));
}

TEST_CASE("called computations and tuple shapes survive the JSON program format") {
  auto body = std::make_shared<Program>("add_body");
  Op x{.name = "x", .opcode = "parameter", .shape = make_shape(ElementType::kF32, {})};
  x.parameter_number = 0;
  Op y = x;
  y.name = "y";
  y.parameter_number = 1;
  const OpId bx = body->add_op(x), by = body->add_op(y);
  body->add_op(Op{.name = "sum", .opcode = "add", .shape = make_shape(ElementType::kF32, {})}, {bx, by});
  Program p("reduce_pair");
  Op in{.name = "in", .opcode = "parameter", .shape = make_shape(ElementType::kBF16, {8, 4})};
  in.parameter_number = 0;
  in.shape.minor_to_major = {0, 1};
  const OpId a = p.add_op(in);
  Op init{.name = "zero", .opcode = "constant", .shape = make_shape(ElementType::kF32, {})};
  const OpId z = p.add_op(init);
  Op reduce{.name = "r", .opcode = "reduce", .shape = make_shape(ElementType::kF32, {8})};
  reduce.dimensions = {1};
  reduce.called = {body};
  const OpId r = p.add_op(reduce, {a, z});
  Op r2 = reduce;
  r2.name = "r2";  // a second caller shares the computation
  const OpId s = p.add_op(r2, {a, z});
  Op tuple{.name = "t", .opcode = "tuple"};
  tuple.shape.element_type = ElementType::kTuple;
  tuple.shape.tuple_shapes = {make_shape(ElementType::kF32, {8}), make_shape(ElementType::kF32, {8})};
  p.add_op(tuple, {r, s});

  const auto json = program_to_json(p);
  REQUIRE(json["computations"].size() == 1);
  const Program again = program_from_json(JsonView(nlohmann::json::parse(json.dump()), "pair.json"));
  REQUIRE(content_key(again) == content_key(p));
  REQUIRE(again.op(2).called.at(0) == again.op(3).called.at(0));  // still one shared computation
  REQUIRE(again.op(4).shape.tuple_shapes.size() == 2);
  REQUIRE(again.computation_count_with_called() == 2);

  auto broken = nlohmann::json::parse(json.dump());
  broken["ops"][2]["called"][0] = "nowhere";
  REQUIRE_THROWS_WITH(program_from_json(JsonView(broken, "pair.json")), Catch::Contains("$.ops[2].called[0]"));
}

TEST_CASE("the ops real networks add survive the JSON program format, and change the key when they change") {
  const auto json = nlohmann::json::parse(R"({"name": "net", "ops": [
    {"name": "x", "opcode": "parameter", "shape": [1, 4, 6, 6], "parameter_number": 0},
    {"name": "w", "opcode": "parameter", "shape": [4, 1, 3, 3], "parameter_number": 1, "weight": true},
    {"name": "conv", "opcode": "convolution", "shape": [1, 4, 2, 2], "operands": ["x", "w"],
     "window": {"size": [3, 3], "window_dilation": [2, 2]},
     "convolution": {"input_batch": 0, "input_feature": 1, "input_spatial": [2, 3], "kernel_input_feature": 1,
                     "kernel_output_feature": 0, "kernel_spatial": [2, 3], "output_batch": 0, "output_feature": 1,
                     "output_spatial": [2, 3], "feature_group_count": 4}},
    {"name": "zero", "opcode": "constant", "shape": [], "value": ["-inf"]},
    {"name": "padded", "opcode": "pad", "shape": [1, 4, 3, 4], "operands": ["conv", "zero"], "padding": {"low": [0, 0, 1, 0], "high": [0, 0, 0, 2]}},
    {"name": "cut", "opcode": "slice", "shape": [1, 2, 3, 2], "operands": ["padded"], "slice": {"start": [0, 3, 0, 3], "stride": [1, -2, 1, -1]}},
    {"name": "picked", "opcode": "gather", "shape": [1, 2, 2, 3, 2], "operands": ["cut"], "dimensions": [1], "indices": [1, 0, 0, 1]},
    {"name": "both", "opcode": "concatenate", "shape": [2, 2, 2, 3, 2], "operands": ["picked", "picked"], "dimensions": [0]}]})");
  const Program program = program_from_json(JsonView(json, "net.json"));
  const Program again = program_from_json(JsonView(nlohmann::json::parse(program_to_json(program).dump()), "again.json"));
  CHECK(content_key(again) == content_key(program));
  CHECK(again.op(1).weight);
  CHECK(again.op(2).convolution->feature_group_count == 4);
  CHECK(std::isinf(again.op(3).literal->at(0)));
  CHECK(again.op(5).slice->stride == std::vector<std::int64_t>{1, -2, 1, -1});
  CHECK(again.op(6).indices == std::vector<std::int64_t>{1, 0, 0, 1});
  // Each attribute is part of what the kernel computes.
  for (const char* path : {"/ops/2/convolution/feature_group_count", "/ops/3/value/0", "/ops/6/indices/0", "/ops/5/slice/start/1"}) {
    auto edited = json;
    auto& value = edited[nlohmann::json::json_pointer(path)];
    value = value.is_string() ? nlohmann::json(1.5) : nlohmann::json(value.get<std::int64_t>() == 1 ? 2 : 1);
    CHECK(content_key(program_from_json(JsonView(edited, "edited.json"))) != content_key(program));
  }
  // Bad values name their place.
  auto bad = json;
  bad["ops"][3]["value"] = {1.0, 2.0};
  CHECK_THROWS_WITH(program_from_json(JsonView(bad, "bad.json")), Catch::Contains("$.ops[3].value"));
  bad = json;
  bad["ops"][5]["slice"]["stride"][0] = 0;
  CHECK_THROWS_WITH(program_from_json(JsonView(bad, "bad.json")), Catch::Contains("$.ops[5].slice.stride"));
}
