#include "surrogate/training/torch_threads.h"

#include <torch/torch.h>

#include <thread>

namespace perftune {

void configure_torch_threads(int threads) {
  if (threads <= 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  torch::set_num_threads(threads);
}

}  // namespace perftune
