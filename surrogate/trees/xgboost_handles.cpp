#include "surrogate/trees/xgboost_handles.h"

#include <limits>
#include <stdexcept>

#include <xgboost/c_api.h>

namespace perftune {

namespace {

// XGBoost's message without the stack trace it appends after the first line.
void check(int status, const char* call) {
  if (status == 0) return;
  std::string message = XGBGetLastError();
  message = message.substr(0, message.find('\n'));
  throw std::runtime_error(std::string("XGBoost ") + call + ": " + message);
}

}  // namespace

XgbMatrix::XgbMatrix(std::span<const float> rows, std::size_t width) {
  if (width == 0 || rows.size() % width != 0) throw std::invalid_argument("XgbMatrix: rows are not a multiple of the width");
  DMatrixHandle handle = nullptr;
  check(XGDMatrixCreateFromMat(rows.data(), rows.size() / width, width, std::numeric_limits<float>::quiet_NaN(), &handle),
        "XGDMatrixCreateFromMat");
  handle_ = handle;
}

XgbMatrix::~XgbMatrix() {
  if (handle_) XGDMatrixFree(handle_);
}

void XgbMatrix::set_labels(std::span<const float> labels) {
  check(XGDMatrixSetFloatInfo(handle_, "label", labels.data(), labels.size()), "XGDMatrixSetFloatInfo(label)");
}

void XgbMatrix::set_groups(std::span<const unsigned> sizes) {
  check(XGDMatrixSetUIntInfo(handle_, "group", sizes.data(), sizes.size()), "XGDMatrixSetUIntInfo(group)");
}

void XgbMatrix::set_base_margin(std::span<const float> margins) {
  check(XGDMatrixSetFloatInfo(handle_, "base_margin", margins.data(), margins.size()), "XGDMatrixSetFloatInfo(base_margin)");
}

XgbBooster::XgbBooster(const XgbMatrix* train) {
  BoosterHandle handle = nullptr;
  DMatrixHandle cache[] = {train ? train->handle() : nullptr};
  check(XGBoosterCreate(cache, train ? 1 : 0, &handle), "XGBoosterCreate");
  handle_ = handle;
}

XgbBooster::~XgbBooster() {
  if (handle_) XGBoosterFree(handle_);
}

void XgbBooster::set_param(const std::string& name, const std::string& value) {
  check(XGBoosterSetParam(handle_, name.c_str(), value.c_str()), "XGBoosterSetParam");
}

void XgbBooster::boost(const XgbMatrix& train, int iteration) {
  check(XGBoosterUpdateOneIter(handle_, iteration, train.handle()), "XGBoosterUpdateOneIter");
}

std::vector<float> XgbBooster::predict_margin(const XgbMatrix& rows) const {
  bst_ulong length = 0;
  const float* scores = nullptr;
  constexpr int kOutputMargin = 1;
  check(XGBoosterPredict(handle_, rows.handle(), kOutputMargin, 0, 0, &length, &scores), "XGBoosterPredict");
  return {scores, scores + length};  // the booster owns `scores` until its next call: copied now
}

std::size_t XgbBooster::feature_count() const {
  bst_ulong count = 0;
  check(XGBoosterGetNumFeature(handle_, &count), "XGBoosterGetNumFeature");
  return count;
}

std::string XgbBooster::save_ubjson() const {
  bst_ulong length = 0;
  const char* text = nullptr;
  check(XGBoosterSaveModelToBuffer(handle_, R"({"format": "ubj"})", &length, &text), "XGBoosterSaveModelToBuffer");
  return {text, length};
}

void XgbBooster::load_ubjson(const std::string& bytes) {
  check(XGBoosterLoadModelFromBuffer(handle_, bytes.data(), bytes.size()), "XGBoosterLoadModelFromBuffer");
}

}  // namespace perftune
