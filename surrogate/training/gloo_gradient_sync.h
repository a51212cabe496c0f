#pragma once
// GradientSync over torch's c10d ProcessGroupGloo: Debian's libtorch 1.13 has it built in and
// libgloo-dev has the headers, so data-parallel training needs no engine of our own. The ranks of
// a launch (distributed/ranks.h, MPI) meet at a c10d TCPStore that rank 0 serves on a free port;
// its address goes to the others through `ranks`. Rank 0's host is named by MASTER_ADDR (torch's
// variable) or else its host name; gloo's transport binds to the interface GLOO_SOCKET_IFNAME
// names, else to the address of this host's name (torch's default).
#include <memory>

#include "distributed/ranks.h"
#include "surrogate/gnn/gradient_sync.h"

namespace perftune {

// Collective: every rank of `ranks` calls it. Throws std::runtime_error when the ranks cannot meet.
std::unique_ptr<GradientSync> gloo_gradient_sync(Ranks& ranks);

}  // namespace perftune
