#pragma once
// What `perftune import` and `perftune inspect` say about an imported network: its size in ONNX
// nodes and IR ops, its kernels after XLA-style greedy fusion, how many of them are distinct (a
// ResNet repeats its blocks), and how long the import took.
#include <cstdint>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "frontend/onnx_import.h"

namespace perftune::frontend {

struct NetworkSummary {
  std::string name;
  std::int64_t opset = 0;
  std::int64_t onnx_nodes = 0, folded_nodes = 0;
  std::int64_t ops = 0;  // IR ops that compute (not parameters or constants)
  std::int64_t weights = 0, weight_elements = 0;
  std::int64_t kernels = 0, unique_kernels = 0;  // after greedy elementwise fusion
  double gflop = 0;  // of the dots and convolutions, multiply-adds counted as two
  double import_seconds = 0;
  std::map<std::string, std::int64_t> op_types;  // ONNX op type -> nodes
};

NetworkSummary summarize_network(const ImportedNetwork& network, double import_seconds);
nlohmann::ordered_json to_json(const NetworkSummary& summary);
std::string summary_text(const NetworkSummary& summary);

}  // namespace perftune::frontend
