#pragma once
// Owning wrappers of XGBoost's C API handles (libxgboost-dev, Debian's XGBoost 1.7): the one place
// the C API is called, each failure a std::runtime_error with XGBoost's own message.
#include <cstddef>
#include <span>
#include <string>
#include <vector>

namespace perftune {

// Rows of `width` floats, row-major (NaN: missing), with labels, per-kernel groups and base margins.
class XgbMatrix {
 public:
  XgbMatrix(std::span<const float> rows, std::size_t width);
  ~XgbMatrix();
  XgbMatrix(const XgbMatrix&) = delete;
  XgbMatrix& operator=(const XgbMatrix&) = delete;

  void set_labels(std::span<const float> labels);
  // Sizes of consecutive row groups (a ranking objective compares rows within a group only).
  void set_groups(std::span<const unsigned> sizes);
  // Each row's starting score: boosting adds trees on top of it.
  void set_base_margin(std::span<const float> margins);
  void* handle() const { return handle_; }

 private:
  void* handle_ = nullptr;
};

class XgbBooster {
 public:
  // A booster to train on `train` (XGBoost sizes its features from it), or without one to load a model.
  explicit XgbBooster(const XgbMatrix* train = nullptr);
  ~XgbBooster();
  XgbBooster(const XgbBooster&) = delete;
  XgbBooster& operator=(const XgbBooster&) = delete;

  void set_param(const std::string& name, const std::string& value);
  void boost(const XgbMatrix& train, int iteration);  // one more round (tree)
  // Raw scores (the margin: base margin plus every tree), one per row.
  std::vector<float> predict_margin(const XgbMatrix& rows) const;
  std::size_t feature_count() const;
  std::string save_ubjson() const;  // XGBoost's binary JSON
  // Throws std::runtime_error for bytes that are no XGBoost model.
  void load_ubjson(const std::string& bytes);

 private:
  void* handle_ = nullptr;
};

}  // namespace perftune
