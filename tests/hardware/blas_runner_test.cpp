// The library runner's OpenBLAS kernels: the peer runs at its best on a CPU its OpenBLAS release
// does not know, and a user's own choice of kernels is kept.
#include <array>
#include <cstdio>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "test_support.h"

namespace perftune {
namespace {

// The runner's answer to one small GEMM, run with `environment` prefixed to its command line.
nlohmann::json gemm_reply(const std::string& environment) {
  const std::string command = "echo '{\"calls\": [{\"kind\": \"gemm\", \"batch\": 1, \"m\": 64, \"k\": 64, \"n\": 64}], \"threads\": 1}' | " +
                              environment + " " + std::string(PERFTUNE_BINARY_DIR) + "/perftune_blas_runner 1";
  FILE* pipe = popen(command.c_str(), "r");
  REQUIRE(pipe);
  std::string out;
  std::array<char, 4096> buffer{};
  while (std::fgets(buffer.data(), buffer.size(), pipe)) out += buffer.data();
  REQUIRE(pclose(pipe) == 0);
  CAPTURE(out);
  const nlohmann::json reply = nlohmann::json::parse(out);
  REQUIRE(reply.at("status") == "ok");
  return reply;
}

TEST_CASE("the library runner's GEMMs run OpenBLAS kernels for this CPU's vector units", "[hardware]") {
  const std::string core = gemm_reply("env -u OPENBLAS_CORETYPE").at("openblas_core");
  CAPTURE(core);
  REQUIRE_FALSE(core.empty());  // Debian's torch calls OpenBLAS
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    const std::set<std::string> before_avx2 = {"Prescott", "Core2", "Penryn", "Dunnington", "Nehalem", "Atom", "Sandybridge"};
    CHECK_FALSE(before_avx2.count(core));
  }
  // A user's own choice is kept, even one below the best.
  CHECK(gemm_reply("env OPENBLAS_CORETYPE=Prescott").at("openblas_core") == "Prescott");
}

}  // namespace
}  // namespace perftune
