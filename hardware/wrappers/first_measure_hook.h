#pragma once
// A backend that calls `hook` once, just before its first measurement (or peer measurement), and
// otherwise forwards everything: for work that must precede measuring but is wasted when nothing
// is measured (a live experiment's machine check, offline/machine_check.h, before a
// re-measure round whose log turns out complete).
#include <functional>
#include <memory>
#include <utility>

#include "hardware/backend.h"

namespace perftune {

class FirstMeasureHook : public Backend {
 public:
  FirstMeasureHook(std::unique_ptr<Backend> inner, std::function<void()> hook) : inner_(std::move(inner)), hook_(std::move(hook)) {}

  std::vector<MeasureResult> measure(const Kernel& kernel, const SearchSpace& space, std::span<const Config> configs) override {
    fire();
    return inner_->measure(kernel, space, configs);
  }
  std::string fingerprint() const override { return inner_->fingerprint(); }
  std::vector<PeerMeasurement> measure_peers(const Kernel& kernel) override {
    fire();
    return inner_->measure_peers(kernel);
  }

 private:
  void fire() {
    if (hook_) std::exchange(hook_, nullptr)();
  }
  std::unique_ptr<Backend> inner_;
  std::function<void()> hook_;
};

}  // namespace perftune
