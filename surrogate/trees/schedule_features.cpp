#include "surrogate/trees/schedule_features.h"

#include <map>
#include <mutex>
#include <stdexcept>

namespace perftune {

namespace {

struct Provided {
  ScheduleFeatureFactory factory;
  std::shared_ptr<ScheduleFeatureSource> made;
};

std::mutex provided_mutex;
// Never destroyed: a source may own worker processes, which must not be stopped during static
// destruction (the subprocess machinery's own statics may be gone); they end with perftune.
std::map<std::string, Provided>& provided() {
  static auto* sources = new std::map<std::string, Provided>;
  return *sources;
}

}  // namespace

void provide_schedule_features(const std::string& name, ScheduleFeatureFactory factory) {
  std::lock_guard lock(provided_mutex);
  provided()[name] = {std::move(factory), nullptr};
}

std::shared_ptr<ScheduleFeatureSource> schedule_features(const std::string& name) {
  std::lock_guard lock(provided_mutex);
  const auto it = provided().find(name);
  if (it == provided().end()) {
    std::string known;
    for (const auto& [each, _] : provided()) known += (known.empty() ? "" : ", ") + each;
    throw std::invalid_argument("schedule features \"" + name + "\" are not provided by this program (provided: " +
                                (known.empty() ? "none" : known) + ")");
  }
  if (!it->second.made) it->second.made = it->second.factory();
  return it->second.made;
}

}  // namespace perftune
