#include "frontend/conformance.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "frontend/onnx_import.h"
#include "hardware/halide/worker/unfused.h"
#include "hardware/reference/op_semantics.h"
#include "hardware/reference/reference_interpreter.h"
#include "ir/file_io.h"
#include "ir/input_error.h"


namespace perftune::conformance {

namespace fs = std::filesystem;

namespace {

std::string compact(std::string text) {
  for (char& c : text)
    if (c == '\n' || c == '|') c = ' ';
  return text.size() > 160 ? text.substr(0, 157) + "..." : text;
}

// The first element where `got` and `want` differ beyond the tolerance, or empty.
std::string mismatch(const std::vector<float>& got, const frontend::KnownTensor& want, const std::string& what, double absolute) {
  if (static_cast<std::int64_t>(got.size()) != want.count())
    return what + ": " + std::to_string(got.size()) + " elements, expected " + std::to_string(want.count());
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double g = got[i], w = want.values[i];
    if (std::isnan(w) && std::isnan(g)) continue;
    if (std::isinf(w) && g == w) continue;
    if (!(std::fabs(g - w) <= absolute + kRelativeTolerance * std::fabs(w)))
      return what + ": element " + std::to_string(i) + " is " + std::to_string(g) + ", expected " + std::to_string(w);
  }
  return "";
}

// The op a case is about: its only op type, else the one its name starts with.
std::string case_op(const std::string& name, const std::set<std::string>& ops) {
  if (ops.size() == 1) return *ops.begin();
  std::string key;
  for (char c : name.substr(5))
    if (c != '_') key += c;
  std::string best;
  std::size_t best_length = 0;
  for (const std::string& op : ops) {
    std::size_t n = 0;
    while (n < op.size() && n < key.size() && std::tolower(static_cast<unsigned char>(op[n])) == key[n]) ++n;
    if (n > best_length) {
      best_length = n;
      best = op;
    }
  }
  // An op's expanded function (test_hannwindow_expanded): named after the op it expands.
  if (best_length < 3) return name.substr(5, name.find('_', 5) == std::string::npos ? std::string::npos : name.find('_', 5) - 5);
  return best;
}

// ONNX's expected window functions (HannWindow, HammingWindow, BlackmanWindow) carry errors of
// up to 7e-5 (their own symmetric entries differ by that much): those cases get atol 1e-4.
double absolute_tolerance(const std::string& name) {
  for (const char* window : {"hannwindow", "hammingwindow", "blackmanwindow"})
    if (name.find(window) != std::string::npos) return 1e-4;
  return kAbsoluteTolerance;
}

std::vector<fs::path> data_files(const fs::path& set, const std::string& prefix) {
  std::vector<fs::path> files;
  for (int i = 0; fs::exists(set / (prefix + std::to_string(i) + ".pb")); ++i) files.push_back(set / (prefix + std::to_string(i) + ".pb"));
  return files;
}

}  // namespace

fs::path node_suite() {
  if (const char* dir = std::getenv("PERFTUNE_ONNX_TESTDATA")) return fs::path(dir) / "node";
  const fs::path debian = "/usr/share/libonnx-testdata/data/node";
  return fs::exists(debian) ? debian : fs::path();
}

std::vector<fs::path> node_cases(const fs::path& suite) {
  std::vector<fs::path> cases;
  for (const auto& entry : fs::directory_iterator(suite))
    if (fs::exists(entry.path() / "model.onnx")) cases.push_back(entry.path());
  std::sort(cases.begin(), cases.end());
  return cases;
}

CaseResult run_case(const fs::path& folder) {
  CaseResult result;
  result.name = folder.filename().string();
  const std::string model_path = (folder / "model.onnx").string();
  onnx::ModelProto model;
  if (!model.ParseFromString(read_file(model_path))) {
    result.outcome = Outcome::kFailed;
    result.reason = "unreadable model";
    return result;
  }
  std::set<std::string> ops;
  for (const auto& node : model.graph().node()) ops.insert(node.op_type());
  result.op = ops.empty() ? "(none)" : case_op(result.name, ops);
  const auto supported = frontend::supported_onnx_ops();
  for (const std::string& op : ops)
    if (!std::binary_search(supported.begin(), supported.end(), op)) {
      result.reason = "op " + op + " not translated";
      return result;
    }

  // Inputs: integer ones (shapes, axes, indices) are known at import; float ones are fed.
  const fs::path set = folder / "test_data_set_0";
  std::set<std::string> initializers;
  for (const auto& t : model.graph().initializer()) initializers.insert(t.name());
  std::vector<std::string> input_names;
  for (const auto& input : model.graph().input()) {
    if (initializers.count(input.name())) continue;
    input_names.push_back(input.name());
    const int type = input.type().tensor_type().elem_type();
    // bfloat16, float16 and double inputs (the test data stores bfloat16 as uint16): not f32.
    if (type == onnx::TensorProto_DataType_BFLOAT16 || type == onnx::TensorProto_DataType_FLOAT16 || type == onnx::TensorProto_DataType_DOUBLE) {
      result.reason = "data type not supported";
      return result;
    }
  }
  const auto input_files = data_files(set, "input_"), output_files = data_files(set, "output_");
  frontend::OnnxImportOptions options;
  std::vector<std::vector<float>> activations;
  std::vector<frontend::KnownTensor> expected;
  try {
    for (std::size_t i = 0; i < input_files.size() && i < input_names.size(); ++i) {
      frontend::KnownTensor t = frontend::load_tensor_file(input_files[i].string());
      if (t.kind != frontend::ValueKind::kFloat) options.known_inputs[input_names[i]] = std::move(t);
      else activations.push_back(t.floats());
    }
    for (const fs::path& f : output_files) expected.push_back(frontend::load_tensor_file(f.string()));
  } catch (const InputError& error) {  // strings, complex numbers: not tensors perftune computes on
    result.reason = "data type not supported";
    return result;
  }
  frontend::ImportedNetwork network;
  try {
    network = frontend::import_onnx(model_path, options);
  } catch (const InputError& error) {
    const std::string what = error.what();
    // A variant the frontend says it does not take (an attribute value, an empty tensor, a type):
    // a skip with its reason. Any other import error is a failure.
    const bool declined = what.find("not supported") != std::string::npos || what.find("no empty tensors") != std::string::npos ||
                          what.find("float32 input") != std::string::npos || what.find("computes in f32") != std::string::npos;
    result.outcome = declined ? Outcome::kSkipped : Outcome::kFailed;
    std::string reason = what.substr(what.find(": ") + 2);
    if (reason.rfind("node '", 0) == 0 && reason.find("): ") != std::string::npos) reason = reason.substr(reason.find("): ") + 3);  // the row names the op
    result.reason = compact(reason);
    return result;
  }
  if (output_files.size() != network.outputs.size()) {
    result.outcome = Outcome::kFailed;
    result.reason = std::to_string(network.outputs.size()) + " outputs, expected " + std::to_string(output_files.size());
    return result;
  }
  try {
    const auto parameters = parameter_values(network.program, activations);
    const auto values = interpret(network.program, parameters);
    for (std::size_t k = 0; k < expected.size(); ++k)
      if (auto problem = mismatch(values[network.outputs[k]], expected[k], "reference, output " + std::to_string(k), absolute_tolerance(result.name)); !problem.empty()) {
        result.outcome = Outcome::kFailed;
        result.reason = problem;
        return result;
      }
    const auto halide_outputs = halide::run_unfused(network.program, parameters);
    std::vector<OpId> computed;
    for (OpId id : network.program.outputs())
      if (!network.program.op(id).is_parameter()) computed.push_back(id);
    for (std::size_t k = 0; k < expected.size(); ++k) {
      const auto at = std::find(computed.begin(), computed.end(), network.outputs[k]) - computed.begin();
      if (auto problem = mismatch(halide_outputs.at(static_cast<std::size_t>(at)), expected[k], "Halide, output " + std::to_string(k), absolute_tolerance(result.name)); !problem.empty()) {
        result.outcome = Outcome::kFailed;
        result.reason = problem;
        return result;
      }
    }
  } catch (const std::exception& error) {
    result.outcome = Outcome::kFailed;
    result.reason = compact(error.what());
    return result;
  }
  result.outcome = Outcome::kPassed;
  return result;
}

std::string summary_table(const std::vector<CaseResult>& results) {
  struct Row {
    int passed = 0, failed = 0, skipped = 0;
    std::map<std::string, int> reasons;
  };
  std::map<std::string, Row> rows;
  const auto supported = frontend::supported_onnx_ops();
  for (const CaseResult& r : results) {
    if (!std::binary_search(supported.begin(), supported.end(), r.op)) continue;  // an op the frontend does not claim
    Row& row = rows[r.op];
    if (r.outcome == Outcome::kPassed) ++row.passed;
    if (r.outcome == Outcome::kFailed) ++row.failed;
    if (r.outcome == Outcome::kSkipped) {
      ++row.skipped;
      ++row.reasons[r.reason];
    }
  }
  std::ostringstream out;
  out << "| op | passed | failed | skipped | why skipped |\n| --- | ---: | ---: | ---: | --- |\n";
  for (const auto& [op, row] : rows) {
    std::string why;
    for (const auto& [reason, n] : row.reasons) why += (why.empty() ? "" : "; ") + reason + (n > 1 ? " (" + std::to_string(n) + ")" : "");
    out << "| " << op << " | " << row.passed << " | " << row.failed << " | " << row.skipped << " | " << why << " |\n";
  }
  return out.str();
}

}  // namespace perftune::conformance
