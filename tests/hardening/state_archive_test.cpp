// scripts/live_sitting's state archives (issue 81, items 1-2): a hostile or damaged archive must
// neither write outside the output folder nor lose the state. Each case runs the real script in
// a scratch copy of the project's layout, with stand-ins for scripts/setup, scripts/build and
// build/perftune, so a sitting takes well under a second.
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <catch2/catch.hpp>

#include "test_support.h"

namespace perftune {
namespace {

namespace fs = std::filesystem;

std::string read_all(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

void write(const fs::path& path, const std::string& text, bool executable = false) {
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << text;
  if (executable) fs::permissions(path, fs::perms::owner_all | fs::perms::group_read | fs::perms::others_read);
}

int run(const std::string& command) {
  const int status = std::system(command.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

// A project root with the two real scripts and stand-ins; the experiment "probe" keeps its output in
// runs/probe and its state in experiments/results/probe/state. The stand-in perftune writes a
// memo file into the output folder, as a sitting's runs would.
struct Sitting {
  fs::path root;
  fs::path output() const { return root / "runs" / "probe"; }
  fs::path state() const { return root / "experiments" / "results" / "probe" / "state"; }

  explicit Sitting(const std::string& name) : root(scratch_dir("state_archive_" + name)) {
    fs::create_directories(root / "scripts");
    for (const char* script : {"live_sitting", "unpack_state"})
      fs::copy_file(source_path(std::string("scripts/") + script), root / "scripts" / script);
    write(root / "scripts" / "setup", "#!/bin/sh\nexit 0\n", true);
    write(root / "scripts" / "build", "#!/bin/sh\nexit 0\n", true);
    write(root / "build" / "perftune", "#!/bin/sh\necho measured >> '" + output().string() + "/memo.jsonl'\n", true);
    write(root / "probe.json", R"({"name": "probe", "output": "runs/probe"})");
    fs::create_directories(state());
  }
  // Runs one sitting of 1 minute (the stand-in finishes at once); returns the exit status.
  int sit(const std::string& environment = "") const {
    return run(environment + " " + (root / "scripts" / "live_sitting").string() + " " + (root / "probe.json").string() +
               " 1 >" + (root / "sitting.log").string() + " 2>&1");
  }
  std::string log() const { return read_all(root / "sitting.log"); }
  // Writes archives with Python's tarfile, which can build what GNU tar would refuse to pack.
  void python(const std::string& code) const {
    write(root / "make.py", "import io, os, tarfile\nstate = '" + state().string() + "'\n" + code);
    REQUIRE(run("python3 " + (root / "make.py").string()) == 0);
  }
};

constexpr const char* kAddFile = R"(
def add(tar, name, data=b'x', mode=0o644, kind=tarfile.REGTYPE, link=''):
    info = tarfile.TarInfo(name)
    info.type, info.mode, info.linkname = kind, mode, link
    if kind == tarfile.REGTYPE:
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    else:
        tar.addfile(info)
)";

TEST_CASE("a state archive cannot plant a link and write through it outside the output folder", "[state_archive]") {
  const std::string link = GENERATE(as<std::string>{}, "absolute", "relative");
  CAPTURE(link);
  Sitting sitting("escape_" + link);
  const fs::path outside = sitting.root / "OUTSIDE";
  fs::create_directories(outside);
  const std::string target = link == "absolute" ? outside.string() : "../../OUTSIDE";
  // seed_1 sorts before shared: the link lands first, the file through it second (the probe's order).
  sitting.python(std::string(kAddFile) + "with tarfile.open(state + '/seed_1.tar.xz', 'w:xz') as t:\n"
                 "    add(t, 'plant', kind=tarfile.SYMTYPE, link='" + target + "')\n"
                 "with tarfile.open(state + '/shared.tar.xz', 'w:xz') as t:\n"
                 "    add(t, 'plant/file', b'planted')\n");
  CHECK(sitting.sit() != 0);
  CHECK_FALSE(fs::exists(outside / "file"));
  CHECK_FALSE(fs::exists(sitting.output()));
  CHECK(sitting.log().find("outside the output folder") != std::string::npos);
}

TEST_CASE("a state archive with a member through a link planted by an earlier archive is refused", "[state_archive]") {
  Sitting sitting("through_link");
  fs::create_directories(sitting.root / "runs");
  // A link that points inside is allowed; writing through it is not (it could be re-pointed).
  sitting.python(std::string(kAddFile) + "with tarfile.open(state + '/seed_1.tar.xz', 'w:xz') as t:\n"
                 "    add(t, 'real', kind=tarfile.DIRTYPE, mode=0o755)\n"
                 "    add(t, 'plant', kind=tarfile.SYMTYPE, link='real')\n"
                 "with tarfile.open(state + '/shared.tar.xz', 'w:xz') as t:\n"
                 "    add(t, 'plant/file', b'x')\n");
  CHECK(sitting.sit() != 0);
  CHECK(sitting.log().find("through the link plant") != std::string::npos);
  CHECK_FALSE(fs::exists(sitting.output()));
}

TEST_CASE("a state archive with a device, a FIFO, a setuid file, an absolute or a .. path is refused", "[state_archive]") {
  struct Case {
    const char* name;
    const char* member;  // Python: add(t, ...)
    const char* message;
  };
  const Case c = GENERATE(Case{"device", "add(t, 'null', kind=tarfile.CHRTYPE)", "a device node"},
                          Case{"fifo", "add(t, 'pipe', kind=tarfile.FIFOTYPE)", "a FIFO"},
                          Case{"setuid", "add(t, 'tool', b'#!/bin/sh', mode=0o4755)", "setuid or setgid"},
                          Case{"setgid", "add(t, 'tool', b'#!/bin/sh', mode=0o2755)", "setuid or setgid"},
                          Case{"absolute", "add(t, '/tmp/perftune_state_archive_probe', b'x')", "an absolute path"},
                          Case{"dotdot", "add(t, 'a/../../escaped', b'x')", "'..'"});
  CAPTURE(c.name);
  Sitting sitting(std::string("refused_") + c.name);
  sitting.python(std::string(kAddFile) + "with tarfile.open(state + '/shared.tar.xz', 'w:xz') as t:\n"
                 "    add(t, 'memo.jsonl', b'{}\\n')\n    " + c.member + "\n");
  const std::string before = read_all(sitting.state() / "shared.tar.xz");
  CHECK(sitting.sit() != 0);
  CHECK(sitting.log().find(c.message) != std::string::npos);
  CHECK_FALSE(fs::exists(sitting.output()));
  CHECK_FALSE(fs::exists(sitting.root / "escaped"));
  CHECK(read_all(sitting.state() / "shared.tar.xz") == before);
}

TEST_CASE("a state archive that unpacks to more than the limit is refused before it is written", "[state_archive]") {
  Sitting sitting("bomb");
  // 3 MiB of zeros packs to a few hundred bytes; the limit is set to 2 MiB for the test.
  sitting.python(std::string(kAddFile) + "with tarfile.open(state + '/shared.tar.xz', 'w:xz') as t:\n"
                 "    add(t, 'zeros', bytes(3 << 20))\n");
  CHECK(fs::file_size(sitting.state() / "shared.tar.xz") < 100000);
  CHECK(sitting.sit("PERFTUNE_STATE_MAX_MB=2") != 0);
  CHECK(sitting.log().find("more than 2 MiB unpacked") != std::string::npos);
  CHECK_FALSE(fs::exists(sitting.output()));
  // Under the default limit the same archive unpacks.
  CHECK(sitting.sit() == 0);
  CHECK(fs::file_size(sitting.output() / "zeros") == (3u << 20));
}

TEST_CASE("a truncated state archive stops the sitting and is never overwritten by a pack of a part", "[state_archive]") {
  Sitting sitting("truncated");
  sitting.python(std::string(kAddFile) + "import random\nrandom.seed(1)\n"
                 "with tarfile.open(state + '/shared.tar.xz', 'w:xz') as t:\n"
                 "    add(t, 'models', kind=tarfile.DIRTYPE, mode=0o755)\n"
                 "    for i in range(8): add(t, f'models/m{i}.pt', random.randbytes(20000))\n"
                 "    add(t, 'memo.jsonl', b'{}\\n')\n");
  std::string whole = read_all(sitting.state() / "shared.tar.xz");
  const std::string cut = whole.substr(0, whole.size() / 2);
  write(sitting.state() / "shared.tar.xz", cut);
  // The old script stopped on tar's error leaving a part unpacked; the next sitting then packed
  // that part over the archive. Now no sitting gets past the unpacking, and the archive stays.
  for (int attempt = 0; attempt < 2; ++attempt) {
    CAPTURE(attempt);
    CHECK(sitting.sit() != 0);
    CHECK_FALSE(fs::exists(sitting.output()));
    CHECK(read_all(sitting.state() / "shared.tar.xz") == cut);
  }
  CHECK(sitting.log().find("a complete .tar.xz archive") != std::string::npos);
  // With the whole archive back, a sitting unpacks, runs and packs it again, listed back whole.
  write(sitting.state() / "shared.tar.xz", whole);
  REQUIRE(sitting.sit() == 0);
  CHECK(read_all(sitting.output() / "memo.jsonl") == "{}\nmeasured\n");
  CHECK(run("xz -dc " + (sitting.state() / "shared.tar.xz").string() + " | tar -tf - | grep -q memo.jsonl") == 0);
  CHECK_FALSE(fs::exists(sitting.state() / "shared.tar.xz.tmp"));
}

TEST_CASE("a pack that cannot list its archive back keeps the archive there", "[state_archive]") {
  Sitting sitting("pack_verify");
  sitting.python(std::string(kAddFile) + "with tarfile.open(state + '/shared.tar.xz', 'w:xz') as t:\n"
                 "    add(t, 'memo.jsonl', b'{}\\n')\n");
  const std::string before = read_all(sitting.state() / "shared.tar.xz");
  // An xz that writes nothing: tar's output is lost and the listing finds no member.
  write(sitting.root / "bin" / "xz", "#!/bin/sh\n[ \"$1\" = -dc ] && exec /usr/bin/xz \"$@\"\ncat > /dev/null\n", true);
  REQUIRE(sitting.sit("PATH=" + (sitting.root / "bin").string() + ":$PATH") != 0);
  CHECK(sitting.log().find("the archive there is kept as it was") != std::string::npos);
  CHECK(read_all(sitting.state() / "shared.tar.xz") == before);
}

}  // namespace
}  // namespace perftune
