// libFuzzer target: arbitrary bytes as a model checkpoint's JSON, read as GnnCostModel::load and
// TreeCostModel::load read it (format, feature schema, hyper-parameters, vocabulary, training
// options, the weights or booster file named). The contract: a bad checkpoint raises InputError
// naming the file and the member, never a crash, a hang, a multi-GB allocation or another
// exception type. The weights themselves are libtorch's and XGBoost's formats, read by them.
#include <cstdint>
#include <string>

#include "fuzz/scratch_file.h"
#include "ir/input_error.h"
#include "surrogate/gnn/gnn_checkpoint_header.h"
#include "surrogate/trees/tree_checkpoint_header.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = perftune::fuzz::write_scratch_file(data, size, "checkpoint", ".json");
  if (path.empty()) return 0;
  try {
    (void)perftune::read_gnn_checkpoint_header(path).params.hidden;
  } catch (const perftune::InputError&) {
  }
  try {
    (void)perftune::read_tree_checkpoint_header(path).params.max_depth;
  } catch (const perftune::InputError&) {
  }
  return 0;
}
