#include "distributed/ranks.h"

#include <mpi.h>

#include <cstdlib>
#include <memory>

namespace perftune {

namespace {

// OpenMPI's mpirun sets OMPI_COMM_WORLD_SIZE; PMIx and PMI launchers (srun, other MPIs) their own.
bool launched_by_mpirun() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_SIZE"})
    if (std::getenv(name)) return true;
  return false;
}

class MpiRanks final : public Ranks {
 public:
  MpiRanks() {
    int initialized = 0;
    MPI_Initialized(&initialized);
    if (!initialized) MPI_Init(nullptr, nullptr);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
    std::atexit([] {
      int finalized = 0;
      MPI_Finalized(&finalized);
      if (!finalized) MPI_Finalize();
    });
  }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  void barrier() override { MPI_Barrier(MPI_COMM_WORLD); }
  std::uint64_t sum(std::uint64_t value) override {
    std::uint64_t total = 0;
    MPI_Allreduce(&value, &total, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    return total;
  }
  [[noreturn]] void abort(int code) override {
    MPI_Abort(MPI_COMM_WORLD, code);
    std::_Exit(code);
  }

 private:
  int rank_ = 0, size_ = 1;
};

}  // namespace

Ranks& process_ranks() {
  static const std::unique_ptr<Ranks> ranks =
      launched_by_mpirun() ? std::unique_ptr<Ranks>(std::make_unique<MpiRanks>()) : std::unique_ptr<Ranks>(std::make_unique<SingleProcess>());
  return *ranks;
}

}  // namespace perftune
