#pragma once
// Facts about the machine perftune runs on, for fingerprints and machine parameters.
#include <string>

namespace perftune {

// The CPU's model name ("AMD EPYC 7B13"), from /proc/cpuinfo; "unknown" if absent.
std::string cpu_model_name();

}  // namespace perftune
