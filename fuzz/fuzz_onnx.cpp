// libFuzzer target: arbitrary bytes as an ONNX model through the frontend (import, then the
// greedy partition a summary makes). The contract: bad input raises InputError, never a crash, a
// hang or another exception type.
#include <cstdint>
#include <string>

#include "frontend/network_summary.h"
#include "frontend/onnx_import.h"
#include "ir/input_error.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    const auto network = perftune::frontend::import_onnx_bytes(std::string(reinterpret_cast<const char*>(data), size), "fuzz.onnx");
    (void)perftune::frontend::summarize_network(network, 0.0);
  } catch (const perftune::InputError&) {
  }
  return 0;
}
