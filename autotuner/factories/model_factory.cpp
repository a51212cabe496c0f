#include "autotuner/factories/model_factory.h"

#include <map>
#include <mutex>

#include "ir/device_spec.h"
#include "ir/file_io.h"
#include "ir/input_error.h"
#include "ir/source.h"
#include "surrogate/analytical/analytical_model.h"
#include "surrogate/learned_model.h"
#include "surrogate/transfer/flat_prior.h"
#include "surrogate/transfer/recorded_model.h"
#include "surrogate/transfer/target_residual.h"

namespace perftune {

namespace {

// The one measured kernel of the recording at `path`, read once per process: an experiment's runs
// share it (each run builds its own model; a Kernel Tuner cache takes a second or more to parse).
std::shared_ptr<const MeasuredKernel> recording(const std::string& path, const ModelSpec& spec, const std::string& place) {
  static std::mutex mutex;
  static std::map<std::string, std::shared_ptr<const MeasuredKernel>> loaded;
  std::lock_guard lock(mutex);
  if (const auto it = loaded.find(path); it != loaded.end()) return it->second;
  if (!path_exists(path)) throw InputError(spec.file, place, "a recording, but " + path + " does not exist");
  Corpus corpus = load_source(path);
  std::vector<MeasuredKernel*> measured;
  for (MeasuredKernel& kernel : corpus.kernels)
    if (kernel.space && !kernel.measurements.empty()) measured.push_back(&kernel);
  if (measured.size() != 1)
    throw InputError(spec.file, place,
                     "a recording of one measured kernel, but " + path + " holds " + std::to_string(measured.size()));
  auto kernel = std::make_shared<const MeasuredKernel>(std::move(*measured.front()));
  loaded.emplace(path, kernel);
  return kernel;
}

// A residual over `priors` as the spec's "residual" says, or the one prior itself without one.
std::unique_ptr<CostModel> with_residual(const ModelSpec& spec, std::vector<std::unique_ptr<CostModel>> priors,
                                         const std::string& priors_place) {
  if (!spec.residual) return std::move(priors.front());  // parse_model_spec: several need a residual
  try {
    return std::make_unique<TargetResidualModel>(std::move(priors), spec.residual_options.model);
  } catch (const std::invalid_argument& error) {
    throw InputError(spec.file, spec.path + priors_place, std::string("priors a residual can combine: ") + error.what());
  }
}

}  // namespace

std::unique_ptr<CostModel> make_model(const ModelSpec& spec, const std::string& source_device) {
  if (spec.type == "none") return nullptr;
  if (spec.type == "analytical") {
    std::string device = spec.device;
    if (device.empty()) {
      try {
        device = device_spec_path(source_device, spec.hardware_dir);
      } catch (const std::invalid_argument& error) {
        throw InputError(spec.file, spec.path, std::string("a \"device\" spec file: ") + error.what());
      }
    }
    // Named with its key here: load_device_spec alone says "<resolved path>: a readable file",
    // which does not tell the owner of a campaign copied elsewhere which key to fix.
    if (!spec.device.empty() && !path_exists(device))
      throw InputError(spec.file, spec.path + ".device",
                       "a device spec file, but " + device + " does not exist (a relative path is taken from the campaign's folder)");
    return std::make_unique<AnalyticalModel>(load_device_spec(device));
  }
  if (spec.type == "learned") {
    auto load_checkpoint = [&](const std::string& path, const std::string& place) {
      if (!path_exists(path))
        throw InputError(spec.file, place, "a checkpoint written by perftune train, but " + path + " does not exist");
      return load_learned_model(path);
    };
    std::vector<std::unique_ptr<CostModel>> priors;
    if (spec.shipped) {
      try {
        priors.push_back(load_checkpoint(spec.checkpoint, spec.path));
      } catch (const InputError& error) {
        throw InputError(error.file(), error.place(),
                         error.expected() + "; the shipped model is retrained and rewritten by scripts/train_shipped_model");
      }
    } else if (!spec.checkpoint.empty()) {
      priors.push_back(load_checkpoint(spec.checkpoint, spec.path + ".checkpoint"));
    } else if (!spec.checkpoints.empty()) {
      for (std::size_t i = 0; i < spec.checkpoints.size(); ++i)
        priors.push_back(load_checkpoint(spec.checkpoints[i], spec.path + ".checkpoints[" + std::to_string(i) + "]"));
    } else {
      priors.push_back(make_online_learned_model(spec.params, spec.seed));
    }
    return with_residual(spec, std::move(priors), ".checkpoints");
  }
  if (spec.type == "recorded") {
    std::vector<std::unique_ptr<CostModel>> priors;
    for (std::size_t i = 0; i < spec.recordings.size(); ++i) {
      const std::string place = spec.path + ".sources[" + std::to_string(i) + "]";
      try {
        priors.push_back(std::make_unique<RecordedTimesModel>(recording(spec.recordings[i], spec, place)));
      } catch (const std::invalid_argument& error) {
        throw InputError(spec.file, place, std::string("a recording with measurements: ") + error.what());
      }
    }
    return with_residual(spec, std::move(priors), ".sources");
  }
  if (spec.type == "gaussian_process") {
    std::vector<std::unique_ptr<CostModel>> priors;
    priors.push_back(std::make_unique<FlatPrior>());
    return with_residual(spec, std::move(priors), "");
  }
  throw InputError(spec.file, spec.path + ".type", "one of \"none\", \"analytical\", \"learned\", \"recorded\", \"gaussian_process\"");
}

std::shared_ptr<CostModel> load_reranker(const std::string& checkpoint) { return load_learned_model(checkpoint); }

}  // namespace perftune
