#include "surrogate/training/gloo_gradient_sync.h"

#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <stdexcept>
#include <string>

#ifndef USE_C10D_GLOO  // what torch's build defines (and its CMake config passes on): the header is empty without it
#define USE_C10D_GLOO
#endif
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#include <torch/torch.h>

namespace perftune {

namespace {

class GlooGradientSync final : public GradientSync {
 public:
  GlooGradientSync(c10::intrusive_ptr<c10d::Store> store, int rank, int size) : rank_(rank), size_(size) {
    auto options = c10d::ProcessGroupGloo::Options::create();
    const char* interface = std::getenv("GLOO_SOCKET_IFNAME");
    options->devices.push_back(interface ? c10d::ProcessGroupGloo::createDeviceForInterface(interface)
                                         : c10d::ProcessGroupGloo::createDefaultDevice());
    group_ = c10::make_intrusive<c10d::ProcessGroupGloo>(std::move(store), rank, size, options);
  }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  void sum(std::span<float> values) override {
    if (values.empty()) return;
    std::vector<at::Tensor> tensors{torch::from_blob(values.data(), {static_cast<std::int64_t>(values.size())}, torch::kFloat32)};
    group_->allreduce(tensors)->wait();
  }

 private:
  int rank_, size_;
  c10::intrusive_ptr<c10d::ProcessGroupGloo> group_;
};

std::string host_name() {
  if (const char* master = std::getenv("MASTER_ADDR")) return master;
  char name[HOST_NAME_MAX + 1] = {};
  if (::gethostname(name, sizeof name - 1) != 0) return "127.0.0.1";
  return name;
}

}  // namespace

std::unique_ptr<GradientSync> gloo_gradient_sync(Ranks& ranks) {
  try {
    c10::intrusive_ptr<c10d::Store> store;
    std::string address;
    if (ranks.rank() == 0) {
      c10d::TCPStoreOptions options;
      options.port = 0;  // a free port, sent to the others below
      options.isServer = true;
      options.numWorkers = static_cast<std::size_t>(ranks.size());
      options.waitWorkers = false;
      const std::string host = host_name();
      auto server = c10::make_intrusive<c10d::TCPStore>(host, options);
      address = host + " " + std::to_string(server->getPort());
      store = server;
    }
    address = ranks.broadcast(address);
    if (ranks.rank() != 0) {
      const auto space = address.rfind(' ');
      c10d::TCPStoreOptions options;
      options.port = static_cast<std::uint16_t>(std::stoi(address.substr(space + 1)));
      store = c10::make_intrusive<c10d::TCPStore>(address.substr(0, space), options);
    }
    return std::make_unique<GlooGradientSync>(std::move(store), ranks.rank(), ranks.size());
  } catch (const c10::Error& error) {
    throw std::runtime_error(std::string("data-parallel training: the ranks could not meet over gloo: ") + error.what_without_backtrace());
  }
}

}  // namespace perftune
