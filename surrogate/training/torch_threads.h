#pragma once
// libtorch's intra-op thread count, set once from the machine's cores (Debian's libtorch otherwise
// leaves OpenMP to guess, which oversubscribes when TBB is busy too).
namespace perftune {

// Sets torch::set_num_threads to `threads`, or to std::thread::hardware_concurrency() when 0.
void configure_torch_threads(int threads = 0);

}  // namespace perftune
