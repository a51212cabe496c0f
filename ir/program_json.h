#pragma once
// perftune's own JSON program format, for programs written by hand (configs/programs/*.json) and
// for kernel definitions inside record logs. Documented in docs/program_format.md.
//
//   {"format": "perftune-program", "version": 1, "name": "mlp_small", "root": "out",
//    "ops": [{"name": "x", "opcode": "parameter", "type": "f32", "shape": [128, 256]},
//            {"name": "y", "opcode": "dot", "operands": ["x", "w"], "shape": [128, 512],
//             "dot": {"lhs_contracting": [1], "rhs_contracting": [0]}}, ...],
//    "computations": [{"name": "add_body", "root": "sum", "ops": [...]}, ...]}
// Ops name called computations ("called": ["add_body"]); tuple-typed ops list their element
// shapes ("type": "tuple", "tuple": [{"type": "f32", "shape": [8]}, ...]). Both are optional, so
// hand-written programs need neither; imported XLA programs use them to keep their content key.
#include <string>

#include <nlohmann/json.hpp>

#include "ir/json_view.h"
#include "ir/program.h"

namespace perftune {

inline constexpr int kProgramFormatVersion = 1;

nlohmann::ordered_json program_to_json(const Program& program);
// Throws InputError naming the file and JSON path of the first problem (unknown key, unknown
// element type, operand that names no op, a cycle).
Program program_from_json(const JsonView& json);
Program load_program_file(const std::string& path);
void save_program_file(const Program& program, const std::string& path);

}  // namespace perftune
