// One writer per output folder: a second holder stops at once naming the first's PID; a lock left
// by a killed process does not block.
#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "ir/output_lock.h"
#include "test_support.h"

using namespace perftune;

TEST_CASE("a second lock on an output folder fails at once, naming the holder's PID") {
  const std::string dir = scratch_dir("output_lock") + "/out";
  {
    const OutputLock first = lock_output_folder(dir);
    CHECK_THROWS_WITH(lock_output_folder(dir), Catch::Contains("in use by another perftune (process " + std::to_string(::getpid()) + ","));
  }
  CHECK_NOTHROW(lock_output_folder(dir));  // released with its holder
}

TEST_CASE("a lock held by another process names it; once it is SIGKILLed the folder is free") {
  const std::string dir = scratch_dir("output_lock_process");
  int ready[2];
  REQUIRE(::pipe(ready) == 0);
  const pid_t holder = ::fork();
  REQUIRE(holder >= 0);
  if (holder == 0) {
    const OutputLock lock = lock_output_folder(dir);
    (void)!::write(ready[1], "x", 1);
    ::pause();
    ::_exit(0);
  }
  char c;
  REQUIRE(::read(ready[0], &c, 1) == 1);
  CHECK_THROWS_WITH(lock_output_folder(dir), Catch::Contains("process " + std::to_string(holder) + ","));
  ::kill(holder, SIGKILL);
  ::waitpid(holder, nullptr, 0);
  // The lock file stays behind, with the dead holder's PID in it: it must not matter.
  CHECK(std::filesystem::exists(dir + "/.perftune.lock"));
  CHECK_NOTHROW(lock_output_folder(dir));
  ::close(ready[0]);
  ::close(ready[1]);
}

TEST_CASE("an output folder that is a file is named as such") {
  const std::string file = scratch_dir("output_lock_file") + "/out";
  std::ofstream(file) << "x";
  CHECK_THROWS_WITH(lock_output_folder(file), Catch::Contains("the output folder " + file + " is a file"));
}

namespace perftune {

// Issue 81: `generate` and `experiment` created their output with a raw create_directories, so an
// output that is a file said "filesystem error: cannot create directories: File exists".
TEST_CASE("an output folder that is a file is named as such by every command's folder creation") {
  const std::string dir = scratch_dir("output_lock_create_folder");
  const std::string file = dir + "/taken";
  std::ofstream(file) << "x";
  CHECK_THROWS_WITH(create_output_folder(file), Catch::Contains("the output folder " + file + " is a file"));
  CHECK_THROWS_WITH(create_output_folder(file + "/below"), Catch::Contains("cannot create the output folder " + file + "/below"));
  create_output_folder(dir + "/a/b");
  CHECK(std::filesystem::is_directory(dir + "/a/b"));
}

}  // namespace perftune
