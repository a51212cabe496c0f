#pragma once
// Registers ".onnx" with ir/source.h, so that every command and config that takes a source or a
// program (inspect, measure, a campaign's or experiment's source) takes an ONNX model too. Called
// once by the program at start-up (cli/main.cpp).
namespace perftune::frontend {

void register_onnx_source();

}  // namespace perftune::frontend
