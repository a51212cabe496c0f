#pragma once
// An ONNX model (ModelProto, opsets 7-17 of the default domain) as a perftune program. The model
// is checked (onnx::checker), its shapes inferred (onnx::shape_inference) once every graph input
// has static dimensions, and each node translated into first-class IR ops (frontend/README.md
// lists what each ONNX op becomes). Shape arithmetic and anything else whose inputs are all known
// at import (Shape, Gather on shapes, Concat of constants, ConstantOfShape, ...) is folded.
// Initializers become parameters marked as weights, with their values kept.
//
// Every failure is an InputError naming the file, the node (name, op type, opset) or input, and
// what was expected.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "frontend/onnx_tensor.h"
#include "ir/program.h"

namespace perftune::frontend {

struct OnnxImportOptions {
  // Static shapes for graph inputs, overriding or fixing dynamic dimensions (--input NAME=1x3x224x224).
  std::map<std::string, Dims> input_shapes;
  // Graph inputs whose values are known at import: they are folded like initializers (ONNX's node
  // tests feed Reshape's shape or Slice's starts as inputs).
  std::map<std::string, KnownTensor> known_inputs;
  std::string name;  // the program's name; default: the graph's name, else the file's stem
};

struct ImportedNetwork {
  Program program;
  std::vector<std::string> input_names;  // graph inputs that stay inputs, in parameter order
  std::vector<OpId> inputs;
  std::vector<std::string> output_names;  // graph outputs, in the graph's order
  std::vector<OpId> outputs;
  std::int64_t opset = 0;
  std::int64_t onnx_nodes = 0;
  std::map<std::string, std::int64_t> op_types;  // ONNX op type -> nodes
  std::int64_t folded_nodes = 0;                 // nodes computed at import
  std::int64_t weight_parameters = 0;
};

// Reads `path` as every input is read (ir/file_io.h: a regular file within PERFTUNE_MAX_INPUT_MB;
// weights in external data files are refused).
ImportedNetwork import_onnx(const std::string& path, const OnnxImportOptions& options = {});
// The same from bytes already read (`file` names them in errors).
ImportedNetwork import_onnx_bytes(const std::string& bytes, const std::string& file, const OnnxImportOptions& options = {});

// "1x3x224x224" as dimensions; throws InputError naming `what` otherwise.
Dims parse_dims(const std::string& text, const std::string& what);

// The ONNX op types the frontend translates, sorted.
std::vector<std::string> supported_onnx_ops();

}  // namespace perftune::frontend
