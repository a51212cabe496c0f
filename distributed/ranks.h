#pragma once
// The processes of one launch that share a command's work: `mpirun -n N build/perftune ...` starts
// N ranks of one MPI job (OpenMPI, Debian's libopenmpi-dev); without mpirun the process is rank 0
// of 1 and MPI is never initialized. Work is divided by rank (an experiment's runs), and rank 0
// alone writes what the ranks share (summary, plots). An interface: the layers above take it
// injected, and tests stand in for several ranks without MPI.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string>

namespace perftune {

class Ranks {
 public:
  virtual ~Ranks() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // Returns once every rank has called it.
  virtual void barrier() = 0;
  // The sum of every rank's `value`, returned on every rank.
  virtual std::uint64_t sum(std::uint64_t value) = 0;
  // Rank 0's `value`, returned on every rank (the others' argument is ignored).
  virtual std::string broadcast(const std::string& value) = 0;
  // A message to rank `to`, and the next one from rank `from` (blocking; in order per pair).
  virtual void send(int to, const std::string& message) = 0;
  virtual std::string receive(int from) = 0;
  // Ends every rank of the launch with `code`: a rank that fails must not leave the others waiting
  // at a barrier for it.
  [[noreturn]] virtual void abort(int code) = 0;

  // Whether item `index` of a list every rank enumerates alike is this rank's (round robin, so
  // a seed-major list gives each rank a share of every space and strategy).
  bool owns(std::size_t index) const { return static_cast<int>(index % static_cast<std::size_t>(size())) == rank(); }
};

// One process: rank 0 of 1.
class SingleProcess final : public Ranks {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  void barrier() override {}
  std::uint64_t sum(std::uint64_t value) override { return value; }
  std::string broadcast(const std::string& value) override { return value; }
  void send(int, const std::string&) override { throw std::logic_error("a single process has no other rank to send to"); }
  std::string receive(int) override { throw std::logic_error("a single process has no other rank to receive from"); }
  [[noreturn]] void abort(int code) override { std::exit(code); }
};

// The ranks of MPI_COMM_WORLD when mpirun started this process (its environment says so), MPI
// initialized on the first call and finalized at exit; otherwise a SingleProcess.
Ranks& process_ranks();

}  // namespace perftune
