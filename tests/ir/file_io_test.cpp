// The one bounded reader (issue 81, items 3-5 and 10): every input goes through read_file, which
// takes regular files only (a FIFO would hang, a device never ends) and holds them to a size
// limit named with its setting; the record log refuses, at open, a log that keeps nothing.
#include "ir/file_io.h"

#include <sys/stat.h>
#include <zlib.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <catch2/catch.hpp>

#include "ir/input_error.h"
#include "ir/json_view.h"
#include "ir/record_log.h"
#include "test_support.h"

namespace perftune {
namespace {

namespace fs = std::filesystem;

// Sets an environment variable for one scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    ::setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (old_) ::setenv(name_, old_->c_str(), 1);
    else ::unsetenv(name_);
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

InputError read_error(const std::string& path) {
  try {
    (void)read_maybe_gzip(path);
  } catch (const InputError& error) {
    return error;
  }
  FAIL("read " << path);
  throw std::logic_error("unreachable");
}

std::string gzip_of(const std::string& bytes) {
  z_stream stream{};
  REQUIRE(deflateInit2(&stream, 9, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) == Z_OK);
  std::string out(deflateBound(&stream, bytes.size()), '\0');
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
  stream.avail_in = static_cast<uInt>(bytes.size());
  stream.next_out = reinterpret_cast<Bytef*>(out.data());
  stream.avail_out = static_cast<uInt>(out.size());
  REQUIRE(deflate(&stream, Z_FINISH) == Z_STREAM_END);
  out.resize(stream.total_out);
  deflateEnd(&stream);
  return out;
}

const char* kRecord =
    R"({"v":1,"type":"record","device":"tpu","kernel":"9f2c1e0a77d3b6a1","name":"k","config":{"a":1},"status":"ok","seconds":1e-4,"spread":0,"repeats":[1e-4],"cost":0.25,"time":1})";

}  // namespace

TEST_CASE("every reader refuses a FIFO, a device and a symlink to one, at once, naming what it is") {
  const std::string dir = scratch_dir("file_io_not_regular");
  const std::string fifo = dir + "/campaign.json";
  REQUIRE(::mkfifo(fifo.c_str(), 0644) == 0);
  fs::create_symlink("/dev/zero", dir + "/zero.json");
  {
    testing::FifoUnblocker unblock(fifo);
    const InputError error = read_error(fifo);
    CHECK(error.file() == fifo);
    CHECK_THAT(error.what(), Catch::Contains("FIFO"));
  }
  CHECK_THAT(read_error(dir + "/zero.json").what(), Catch::Contains("a character device"));
  CHECK_THAT(read_error("/dev/zero").what(), Catch::Contains("a regular file"));
  // The JSON readers (campaigns, configs, programs, checkpoints) read through it too.
  CHECK_THROWS_WITH(parse_json_file(dir + "/zero.json"), Catch::Contains("zero.json") && Catch::Contains("character device"));
  CHECK_THAT(read_error(dir).what(), Catch::Contains("this is a folder"));
  CHECK_THAT(read_error(dir + "/absent.json").what(), Catch::Contains("does not exist"));
}

TEST_CASE("a file above the input limit is refused before it is read, naming its size, the limit and the setting") {
  const std::string dir = scratch_dir("file_io_limit");
  const std::string big = dir + "/big.jsonl";
  std::ofstream(big) << std::string(3 << 20, ' ');  // 3 MiB
  const ScopedEnv limit(kMaxInputSetting, "2");
  CHECK(max_input_bytes() == (2u << 20));
  const InputError error = read_error(big);
  CHECK(error.file() == big);
  CHECK_THAT(error.what(), Catch::Contains("at most 2 MiB") && Catch::Contains("3 MiB") && Catch::Contains(kMaxInputSetting));
  // A small gzip that inflates past the limit (3 MiB of zeros packs to a few KB) is held to it too.
  const std::string bomb = dir + "/bomb.jsonl.gz";
  std::ofstream(bomb, std::ios::binary) << gzip_of(std::string(3 << 20, '\0'));
  CHECK(fs::file_size(bomb) < 100000);
  CHECK_THAT(read_error(bomb).what(), Catch::Contains("inflates to more than") && Catch::Contains(kMaxInputSetting));
  // The record log reader goes through it.
  CHECK_THROWS_AS(RecordLog::load(big), InputError);
}

TEST_CASE("the input limit's setting is checked") {
  for (const char* value : {"0", "-1", "lots", "1e3", "99999999999999999999"}) {
    CAPTURE(value);
    const ScopedEnv limit(kMaxInputSetting, value);
    CHECK_THROWS_WITH(max_input_bytes(), Catch::Contains(kMaxInputSetting) && Catch::Contains(value));
  }
  const ScopedEnv unset(kMaxInputSetting, "");
  CHECK(max_input_bytes() == (kDefaultMaxInputMiB << 20));
}

TEST_CASE("a record log that is a symlink to /dev/zero or a FIFO is refused at open") {
  const std::string dir = scratch_dir("file_io_record_log");
  fs::create_symlink("/dev/zero", dir + "/records.jsonl");
  CHECK_THROWS_WITH(RecordLog(dir + "/records.jsonl"), Catch::Contains("records.jsonl") && Catch::Contains("a record log") &&
                                                           Catch::Contains("a device"));
  const std::string fifo = dir + "/fifo.jsonl";
  REQUIRE(::mkfifo(fifo.c_str(), 0644) == 0);
  CHECK_THROWS_WITH(RecordLog(fifo), Catch::Contains("FIFO"));
  // A symlink to a regular file is a log like any other.
  std::ofstream(dir + "/real.jsonl") << kRecord << "\n";
  fs::create_symlink(dir + "/real.jsonl", dir + "/link.jsonl");
  CHECK_NOTHROW(RecordLog(dir + "/link.jsonl"));
  CHECK(RecordLog::load(dir + "/link.jsonl").records.size() == 1);
}

TEST_CASE("record lines with an impossible spread or time, or an empty line between records, are refused by place") {
  const std::string dir = scratch_dir("file_io_record_lines");
  const std::string record = kRecord;
  struct Case {
    const char* name;
    std::string text;
    const char* place;
  };
  const auto with = [&](const std::string& from, const std::string& to) {
    std::string line = record;
    line.replace(line.find(from), from.size(), to);
    return line;
  };
  const Case c = GENERATE_COPY(Case{"negative spread", with("\"spread\":0", "\"spread\":-5") + "\n", "line 1"},
                               Case{"huge spread", with("\"spread\":0", "\"spread\":1e308") + "\n", "line 1"},
                               Case{"negative time", with("\"time\":1", "\"time\":-1e300") + "\n", "line 1"},
                               Case{"far-future time", with("\"time\":1", "\"time\":1e300") + "\n", "line 1"},
                               Case{"empty line", record + "\n\n" + with("\"a\":1", "\"a\":2") + "\n", "line 2"});
  CAPTURE(c.name);
  const std::string path = dir + "/log.jsonl";
  std::ofstream(path) << c.text;
  try {
    RecordLog::load(path);
    FAIL("accepted");
  } catch (const InputError& error) {
    CHECK(error.file() == path);
    CHECK(error.place().rfind(c.place, 0) == 0);
  }
  // A blank tail (an editor's last newline) stays harmless.
  std::ofstream(path) << record << "\n\n";
  CHECK(RecordLog::load(path).records.size() == 1);
}

}  // namespace perftune
