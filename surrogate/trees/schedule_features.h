#pragma once
// Features a backend derives from what a config compiles to, such as the statistics of the loop
// nest Halide lowers it to (hardware/halide/loop_nest_features.h), appended to the tree model's rows.
// A model names its source in its params ("schedule_features"); the program that trains or loads
// it provides the source under that name (cli/main.cpp), since surrogate/ does not see the
// backends.
#include <cstddef>
#include <functional>
#include <memory>
#include <span>
#include <string>

#include "ir/config.h"
#include "ir/kernel.h"
#include "ir/search_space.h"

namespace perftune {

class ScheduleFeatureSource {
 public:
  virtual ~ScheduleFeatureSource() = default;
  virtual std::size_t width() const = 0;
  // configs.size() x width() floats into `out`, row-major; NaN where a config has none (a
  // schedule that does not compile): missing values, to the trees.
  virtual void rows(const Kernel& kernel, const SearchSpace& space, std::span<const Config> configs, std::span<float> out) = 0;
};

using ScheduleFeatureFactory = std::function<std::shared_ptr<ScheduleFeatureSource>()>;

// Makes `factory` the source called `name` in this process; it runs at the first use of the name.
void provide_schedule_features(const std::string& name, ScheduleFeatureFactory factory);
// The source called `name`, made once per process and shared by every model that names it.
// std::invalid_argument naming the provided ones if there is none of that name.
std::shared_ptr<ScheduleFeatureSource> schedule_features(const std::string& name);

}  // namespace perftune
