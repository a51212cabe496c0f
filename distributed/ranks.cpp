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
  static constexpr int kMessageTag = 1;

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
  std::string broadcast(const std::string& value) override {
    std::uint64_t length = rank_ == 0 ? value.size() : 0;
    MPI_Bcast(&length, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    std::string out = rank_ == 0 ? value : std::string(length, '\0');
    MPI_Bcast(out.data(), static_cast<int>(length), MPI_CHAR, 0, MPI_COMM_WORLD);
    return out;
  }
  void send(int to, const std::string& message) override {
    MPI_Send(message.data(), static_cast<int>(message.size()), MPI_CHAR, to, kMessageTag, MPI_COMM_WORLD);
  }
  std::string receive(int from) override {
    MPI_Status status;
    MPI_Probe(from, kMessageTag, MPI_COMM_WORLD, &status);
    int length = 0;
    MPI_Get_count(&status, MPI_CHAR, &length);
    std::string message(static_cast<std::size_t>(length), '\0');
    MPI_Recv(message.data(), length, MPI_CHAR, from, kMessageTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    return message;
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
