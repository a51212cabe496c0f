#pragma once
// XLA HloModuleProto -> Program. Each computation becomes a Program; an instruction's operands
// (ids of instructions in the same computation) become edges in operand order, and its called
// computations (reduce bodies, while loops, fused computations) stay attached as Op::called,
// each computation converted once and shared by every caller.
#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "ir/program.h"
#include "tuning_data.pb.h"  // generated from ir/tuning_data.proto

namespace perftune {

struct HloModule {
  std::string name;
  std::shared_ptr<const Program> entry;
  std::map<std::int64_t, std::shared_ptr<const Program>> computations;  // by computation id
};

// Converts every computation of `module`. Throws InputError naming `file`, `place` (e.g.
// "module 3 ('fusion.191')"), the computation and the instruction for an unknown element type,
// an operand id that is not in the same computation, a root id that names no instruction,
// a computation that calls itself, or a cycle among operands.
HloModule import_hlo_module(const proto::HloModuleProto& module, const std::string& file, const std::string& place);

// Shape as perftune sees it; nullopt-free: throws InputError (with `file`, `place`) for an
// element type that is not a known xla::PrimitiveType.
Shape shape_from_proto(const proto::ShapeProto& shape, const std::string& file, const std::string& place);

}  // namespace perftune
