#include "frontend/onnx_source.h"

#include <memory>

#include "frontend/onnx_import.h"
#include "ir/source.h"

namespace perftune::frontend {

void register_onnx_source() {
  register_source_format(".onnx", "ONNX model", [](const std::string& path) {
    Corpus corpus;
    corpus.path = path;
    corpus.format = "onnx";
    corpus.programs.push_back(std::make_shared<Program>(import_onnx(path).program));
    return corpus;
  });
}

}  // namespace perftune::frontend
