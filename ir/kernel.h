#pragma once
// A kernel: a fused sub-graph that runs as one unit on the device. Its parameters are ops with
// opcode "parameter"; its outputs are the ops without users. The key is a content hash, so the
// same graph gives the same key across runs and machines (names do not count).
#include <string>
#include <vector>

#include "ir/program.h"

namespace perftune {

class Kernel {
 public:
  Kernel() = default;
  // Throws InputError if the body has a cycle.
  Kernel(std::string name, Program body);
  // A kernel known only by name and key (a record log without its definition line).
  static Kernel opaque(std::string name, std::string key);

  const std::string& name() const { return name_; }
  const Program& body() const { return body_; }
  const std::string& key() const { return key_; }
  std::vector<OpId> parameters() const;  // ordered by parameter_number
  std::vector<OpId> outputs() const { return body_.outputs(); }

 private:
  std::string name_;
  Program body_;
  std::string key_;
};

// 16 hex digits of a 64-bit FNV-1a hash over a canonical, name-free text of the program.
std::string content_key(const Program& program);
// The canonical text itself (exposed for tests and for debugging key mismatches).
std::string canonical_text(const Program& program);

}  // namespace perftune
