#include "encoder/core/tensor.h"

#include <cstdlib>
#include <cstring>
#include <sstream>

namespace neodb::encoder {
namespace {

constexpr size_t kAlignment = 64;

std::shared_ptr<void> AllocateCpu(size_t nbytes) {
  const size_t rounded = (nbytes + kAlignment - 1) / kAlignment * kAlignment;
  void* p = std::aligned_alloc(kAlignment, rounded == 0 ? kAlignment : rounded);
  NEODB_CHECK(p != nullptr);
  return std::shared_ptr<void>(p, [](void* q) { std::free(q); });
}

}  // namespace

Tensor Tensor::Empty(Shape shape, DType dtype) {
  Tensor t;
  t.shape_ = std::move(shape);
  t.dtype_ = dtype;
  t.device_ = Device::kCpu;
  for (int64_t d : t.shape_) NEODB_CHECK(d >= 0);
  t.owner_ = AllocateCpu(t.nbytes());
  t.data_ = t.owner_.get();
  return t;
}

Tensor Tensor::Zeros(Shape shape, DType dtype) {
  Tensor t = Empty(std::move(shape), dtype);
  std::memset(t.data_, 0, t.nbytes());
  return t;
}

Tensor Tensor::Borrow(void* data, Shape shape, DType dtype, Device device,
                      std::shared_ptr<void> owner) {
  Tensor t;
  t.owner_ = std::move(owner);
  t.data_ = data;
  t.shape_ = std::move(shape);
  t.dtype_ = dtype;
  t.device_ = device;
  return t;
}

int64_t Tensor::dim(int i) const {
  if (i < 0) i += rank();
  NEODB_CHECK(i >= 0 && i < rank());
  return shape_[i];
}

int64_t Tensor::numel() const {
  int64_t n = 1;
  for (int64_t d : shape_) n *= d;
  return n;
}

Tensor Tensor::Reshape(Shape shape) const {
  Tensor t = *this;
  t.shape_ = std::move(shape);
  NEODB_CHECK(t.numel() == numel());
  return t;
}

Tensor Tensor::Rows(int64_t begin, int64_t end) const {
  NEODB_CHECK(rank() >= 1 && 0 <= begin && begin <= end && end <= shape_[0]);
  Tensor t = *this;
  const size_t row_bytes = shape_[0] == 0 ? 0 : nbytes() / shape_[0];
  t.data_ = static_cast<char*>(data_) + begin * row_bytes;
  t.shape_[0] = end - begin;
  return t;
}

Tensor Tensor::ToF32() const {
  NEODB_CHECK(device_ == Device::kCpu);
  if (dtype_ == DType::kF32) return *this;
  Tensor out = Empty(shape_, DType::kF32);
  float* dst = out.data<float>();
  const int64_t n = numel();
  switch (dtype_) {
    case DType::kBF16: {
      const uint16_t* src = data<uint16_t>();
      for (int64_t i = 0; i < n; ++i) dst[i] = BF16ToF32(src[i]);
      break;
    }
    case DType::kF16: {
      const uint16_t* src = data<uint16_t>();
      for (int64_t i = 0; i < n; ++i) dst[i] = F16ToF32(src[i]);
      break;
    }
    case DType::kF64: {
      const double* src = data<double>();
      for (int64_t i = 0; i < n; ++i) dst[i] = static_cast<float>(src[i]);
      break;
    }
    case DType::kI32: {
      const int32_t* src = data<int32_t>();
      for (int64_t i = 0; i < n; ++i) dst[i] = static_cast<float>(src[i]);
      break;
    }
    case DType::kF32:
      break;
  }
  return out;
}

Tensor Tensor::Clone() const {
  NEODB_CHECK(device_ == Device::kCpu);
  Tensor out = Empty(shape_, dtype_);
  if (nbytes() > 0) std::memcpy(out.data_, data_, nbytes());
  return out;
}

std::string Tensor::DebugString() const {
  std::ostringstream os;
  os << DTypeName(dtype_) << "[";
  for (int i = 0; i < rank(); ++i) os << (i ? ", " : "") << shape_[i];
  os << "] " << DeviceName(device_);
  return os.str();
}

}  // namespace neodb::encoder
