#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include <zlib.h>

#include "ir/corpus_summary.h"
#include "ir/file_io.h"
#include "ir/input_error.h"
#include "ir/json_view.h"
#include "ir/kernel_tuner_cache.h"
#include "ir/source.h"
#include "test_support.h"

using namespace perftune;

namespace {

// A two-parameter cache with one string-valued parameter; `time_b` is the second record's time.
std::string small_cache(const std::string& time_b) {
  return std::string(R"({"device_name": "Toy GPU", "kernel_name": "toy", "problem_size": [64, 32],
  "tune_params_keys": ["block", "mode"], "tune_params": {"block": [32, 64], "mode": ["fast", "safe"]},
  "cache": {
    "32,fast": {"block": 32, "mode": "fast", "time": 2.0, "times": [1.9, 2.1], "compile_time": 100, "benchmark_time": 20},
    "64,safe": {"block": 64, "mode": "safe", "time": )") + time_b + R"(, "times": [1.0], "compile_time": 50},
    "64,fast": {"block": 64, "mode": "fast", "time": "CompilationFailedConfig", "compile_time": 10},
    "32,safe": {"block": 32, "mode": "safe", "time": "RuntimeFailedConfig"}}})";
}

std::string gzip(const std::string& text) {
  std::string out(compressBound(static_cast<uLong>(text.size())) + 64, '\0');
  z_stream z{};
  deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY);
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  z.avail_in = static_cast<uInt>(text.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

void write(const std::string& path, const std::string& bytes) { std::ofstream(path, std::ios::binary) << bytes; }

}  // namespace

TEST_CASE("a Kernel Tuner cache becomes one kernel with its space, records, costs and failures") {
  const Corpus corpus = kernel_tuner_corpus(nlohmann::json::parse(small_cache("1.0")), "toy.json");
  REQUIRE(corpus.format == "kernel-tuner");
  REQUIRE(corpus.kernels.size() == 1);
  const MeasuredKernel& k = corpus.kernels[0];
  REQUIRE(k.device == "Toy GPU");
  REQUIRE(k.kernel.name() == "toy");
  REQUIRE(k.kernel.body().op(0).shape.dims == std::vector<std::int64_t>{64, 32});
  REQUIRE(k.space->knob_names() == std::vector<std::string>{"block", "mode"});
  REQUIRE(k.space->knobs()[1].values == std::vector<std::int64_t>{0, 1});  // "fast", "safe" by index
  REQUIRE(*k.space->size() == 4);
  REQUIRE(k.measurements.size() == 4);
  REQUIRE(corpus.failed_count() == 2);
  std::map<std::string, const Measurement*> by_key;
  for (const auto& m : k.measurements) by_key[m.config.to_string()] = &m;
  const Measurement& first = *by_key.at("[32,0]");
  REQUIRE(first.result.ok());
  REQUIRE(first.result.seconds == Approx(2.0e-3));
  REQUIRE(first.result.repeats.size() == 2);
  REQUIRE(first.result.cost_seconds == Approx(0.12));
  REQUIRE(by_key.at("[64,0]")->result.status == MeasureStatus::kCompileError);
  REQUIRE(by_key.at("[32,1]")->result.status == MeasureStatus::kRuntimeError);
  REQUIRE(by_key.at("[32,1]")->result.message == "RuntimeFailedConfig");
  REQUIRE(k.measurements[*k.best_index()].config.to_string() == "[64,1]");
  REQUIRE_FALSE(k.default_index.has_value());
}

TEST_CASE("caches of one kernel on two GPUs share a kernel key") {
  auto other = nlohmann::json::parse(small_cache("1.0"));
  other["device_name"] = "Other GPU";
  REQUIRE(kernel_tuner_corpus(other, "a.json").kernels[0].kernel.key() ==
          kernel_tuner_corpus(nlohmann::json::parse(small_cache("3.0")), "b.json").kernels[0].kernel.key());
}

TEST_CASE("bad times in a cache name the record") {
  // "fast" and "3.2" are no failure marker Kernel Tuner writes, 0 is no runtime: each is an error
  // naming the record, not a silent failure or a best of 0 s.
  const auto [bad, words] = GENERATE(table<std::string, std::string>({{"-1.0", "negative"}, {"null", "a runtime in ms"},
      {"\"\"", "failure markers"}, {"\"fast\"", "found the string \"fast\""}, {"\"3.2\"", "found the string \"3.2\""},
      {"0", "0 s"}}));
  CAPTURE(bad);
  REQUIRE_THROWS_WITH(kernel_tuner_corpus(nlohmann::json::parse(small_cache(bad)), "bad.json"),
                      Catch::Contains("bad.json: $.cache[\"64,safe\"].time") && Catch::Contains(words));
}

TEST_CASE("a cache key that disagrees with its record's values is rejected") {
  std::string text = small_cache("1.0");
  const std::string key = "\"64,safe\": {\"block\": 64";
  REQUIRE(text.find(key) != std::string::npos);
  text.replace(text.find(key), key.size(), "\"64,safe\": {\"block\": 32");
  // Now "32,safe" twice in values; the first disagreeing key is reported.
  REQUIRE_THROWS_WITH(kernel_tuner_corpus(nlohmann::json::parse(text), "edited.json"),
                      Catch::Contains("edited.json: $.cache[\"64,safe\"]") && Catch::Contains("disagree"));
  // Kernel Tuner's InvalidConfig marker is a failure like the other two.
  std::string invalid = small_cache("\"InvalidConfig\"");
  CHECK(kernel_tuner_corpus(nlohmann::json::parse(invalid), "ok.json").failed_count() == 3);
}

TEST_CASE("NaN in a cache file, a malformed cache and a truncated gzip are reported with their place") {
  const std::string dir = scratch_dir("kernel_tuner_bad");
  write(dir + "/nan.json", small_cache("NaN"));  // Python's json writes NaN, which JSON does not allow
  REQUIRE_THROWS_WITH(load_source(dir + "/nan.json"), Catch::Contains("nan.json: line 5"));
  std::string broken = small_cache("1.0");
  broken.insert(broken.find("\"64,fast\""), "}}");
  write(dir + "/broken.json.gz", gzip(broken));
  REQUIRE_THROWS_WITH(load_source(dir + "/broken.json.gz"), Catch::Contains("broken.json.gz: line 6"));
  const std::string zipped = gzip(small_cache("1.0"));
  write(dir + "/cut.json.gz", zipped.substr(0, zipped.size() / 2));
  REQUIRE_THROWS_WITH(load_source(dir + "/cut.json.gz"), Catch::Contains("cut.json.gz: byte") && Catch::Contains("truncated"));
  write(dir + "/ok.json.gz", zipped);
  REQUIRE(load_source(dir + "/ok.json.gz").measurement_count() == 4);
  write(dir + "/plain.json", small_cache("1.0"));  // a .json file with a "cache" member is a cache
  REQUIRE(load_source(dir + "/plain.json").format == "kernel-tuner");
}

TEST_CASE("an empty cache is rejected") {
  auto json = nlohmann::json::parse(small_cache("1.0"));
  json["cache"] = nlohmann::json::object();
  REQUIRE_THROWS_WITH(kernel_tuner_corpus(json, "empty.json"), Catch::Contains("empty.json: $.cache") && Catch::Contains("empty space"));
}

TEST_CASE("GEMM on the RTX 2080 Ti: 17,956 records") {
  PERFTUNE_REQUIRE_DATA(path, "kernel_tuner/gemm/RTX_2080_Ti.json.gz");
  const Corpus corpus = load_source(path);
  REQUIRE(corpus.kernels.size() == 1);
  const MeasuredKernel& k = corpus.kernels[0];
  REQUIRE(k.measurements.size() == 17956);
  REQUIRE(corpus.failed_count() == 0);
  REQUIRE(k.device == "NVIDIA GeForce RTX 2080 Ti");
  REQUIRE(k.space->dimension() == 15);
  REQUIRE(*k.space->size() == 17956);
  REQUIRE_FALSE(k.default_index.has_value());  // gemm/ has no space.json
  // Load speed is measured by bench/bench_importers, not here: a timed unit test fails on a busy machine.
}

TEST_CASE("convolution on the A6000: 4,362 records of which 473 failed, and the space.json default") {
  PERFTUNE_REQUIRE_DATA(path, "kernel_tuner/convolution/A6000.json.gz");
  const Corpus corpus = load_source(path);
  const MeasuredKernel& k = corpus.kernels.at(0);
  REQUIRE(k.measurements.size() == 4362);
  REQUIRE(corpus.failed_count() == 473);
  std::size_t compile = 0;
  for (const auto& m : k.measurements) compile += m.result.status == MeasureStatus::kCompileError ? 1 : 0;
  REQUIRE(compile == 252);
  REQUIRE(k.default_index.has_value());
  const nlohmann::ordered_json def = k.space->to_json(k.measurements[*k.default_index].config);
  REQUIRE(def["block_size_x"] == 16);
  REQUIRE(def["block_size_y"] == 16);
  REQUIRE(def["use_padding"] == 1);
}

TEST_CASE("a cache without a device name takes it from the file name") {
  PERFTUNE_REQUIRE_DATA(path, "kernel_tuner/convolution/MI250X.json.gz");
  REQUIRE(load_source(path).kernels.at(0).device == "MI250X");
}

TEST_CASE("a cache moved away from its space.json says it has lost its default, and inspect shows every device name whole") {
  const std::string dir = scratch_dir("kernel_tuner_moved");
  std::filesystem::create_directories(dir + "/with");
  write(dir + "/with/toy.json", small_cache("1.0"));
  write(dir + "/with/space.json", R"({"ConfigurationSpace": {"TuningParameters": [
      {"Name": "block", "Default": 64}, {"Name": "mode", "Default": "safe"}]}})");
  const Corpus beside = load_kernel_tuner_cache(dir + "/with/toy.json");
  CHECK(beside.notes.empty());
  REQUIRE(beside.kernels[0].default_index.has_value());

  std::filesystem::create_directories(dir + "/moved");
  write(dir + "/moved/toy.json", small_cache("1.0"));
  const Corpus moved = load_kernel_tuner_cache(dir + "/moved/toy.json");
  CHECK_FALSE(moved.kernels[0].default_index.has_value());
  REQUIRE(moved.notes.size() == 1);
  CHECK(moved.notes[0].find("no default config") != std::string::npos);
  CHECK(moved.notes[0].find(dir + "/moved/space.json") != std::string::npos);
  CHECK(summary_table(summarize(moved)).find("note: no default config") != std::string::npos);

  // Two GPUs whose names share their first 18 characters stay told apart in the table.
  nlohmann::ordered_json summary = summarize(moved);
  summary["per_kernel"].push_back(summary["per_kernel"][0]);
  summary["per_kernel"][0]["device"] = "NVIDIA GeForce RTX 2080 Ti";
  summary["per_kernel"][1]["device"] = "NVIDIA GeForce RTX 3060 Laptop GPU";
  const std::string table = summary_table(summary);
  CHECK(table.find("NVIDIA GeForce RTX 2080 Ti") != std::string::npos);
  CHECK(table.find("NVIDIA GeForce RTX 3060 Laptop GPU") != std::string::npos);
}
