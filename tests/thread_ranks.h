#pragma once
// The ranks of one launch played by threads of the test process: what an MPI job gives
// (distributed/ranks.h), with messages through in-memory queues, so that a rank-spread backend or
// data-parallel training can be tested without mpirun. ThreadWorld::rank(r) is rank r's view.
#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <utility>

#include "distributed/ranks.h"

namespace perftune {

class ThreadWorld {
 public:
  explicit ThreadWorld(int size) : size_(size) {
    for (int r = 0; r < size; ++r) ranks_.push_back(std::make_unique<View>(*this, r));
  }
  Ranks& rank(int r) { return *ranks_.at(static_cast<std::size_t>(r)); }

 private:
  class View final : public Ranks {
   public:
    View(ThreadWorld& world, int rank) : world_(world), rank_(rank) {}
    int rank() const override { return rank_; }
    int size() const override { return world_.size_; }
    void barrier() override { sum(0); }
    std::uint64_t sum(std::uint64_t value) override {
      if (rank_ != 0) {
        send(0, std::to_string(value));
        return std::stoull(receive(0));
      }
      for (int r = 1; r < size(); ++r) value += std::stoull(receive(r));
      for (int r = 1; r < size(); ++r) send(r, std::to_string(value));
      return value;
    }
    std::string broadcast(const std::string& value) override {
      if (rank_ != 0) return receive(0);
      for (int r = 1; r < size(); ++r) send(r, value);
      return value;
    }
    void send(int to, const std::string& message) override {
      std::lock_guard lock(world_.mutex_);
      world_.queues_[{rank_, to}].push_back(message);
      world_.arrived_.notify_all();
    }
    std::string receive(int from) override {
      std::unique_lock lock(world_.mutex_);
      auto& queue = world_.queues_[{from, rank_}];
      world_.arrived_.wait(lock, [&] { return !queue.empty(); });
      std::string message = std::move(queue.front());
      queue.pop_front();
      return message;
    }
    [[noreturn]] void abort(int code) override { throw std::runtime_error("rank aborted with " + std::to_string(code)); }

   private:
    ThreadWorld& world_;
    int rank_;
  };

  int size_;
  std::vector<std::unique_ptr<View>> ranks_;
  std::mutex mutex_;
  std::condition_variable arrived_;
  std::map<std::pair<int, int>, std::deque<std::string>> queues_;  // (from, to) -> messages
};

}  // namespace perftune
