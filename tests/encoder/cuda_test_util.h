#pragma once
// Shared helpers of the CUDA tests: device detection (skip only when there is
// no device), host<->device copies in an activation dtype, poisoning, and
// vector comparisons.

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "encoder/core/dtype.h"
#include "encoder/cuda/cuda_context.h"
#include "encoder/cuda/device_buffer.h"
#include "gtest/gtest.h"

namespace neodb::encoder::testing {

// The context for device 0, or nullptr when there is no CUDA device (the
// status message is stored in *why). Any other failure fails the test.
std::unique_ptr<cuda::CudaContext> MakeContextOrNull(std::string* why);

// Skips the test ONLY when there is no CUDA device (the message then starts
// "no CUDA device"); any other failure to start CUDA fails the test.
#define NEODB_CUDA_CONTEXT_OR_SKIP(ctx)                                         \
  std::string neodb_why_;                                                       \
  auto ctx = ::neodb::encoder::testing::MakeContextOrNull(&neodb_why_);         \
  if (ctx == nullptr) {                                                         \
    if (neodb_why_.rfind("no CUDA device", 0) == 0) GTEST_SKIP() << neodb_why_; \
    FAIL() << neodb_why_;                                                       \
  }

// Rounds every value to `dtype` and back (what the device will see).
std::vector<float> RoundTo(const std::vector<float>& v, DType dtype);

// Copies `v` to a new device buffer as `dtype`.
cuda::DeviceBuffer Upload(const std::vector<float>& v, DType dtype);
cuda::DeviceBuffer UploadI32(const std::vector<int32_t>& v);
// Reads n elements of `dtype` from device memory as F32 (synchronous).
std::vector<float> Download(const void* src, int64_t n, DType dtype);
// Fills a device buffer with 0xFF bytes: NaN in F32, F16 and BF16.
void Poison(const cuda::DeviceBuffer& buf);

std::vector<float> RandomVector(int64_t n, float lo, float hi, std::mt19937_64& rng);

struct Diff {
  double max_abs = 0;  // max |a - b|
  double max_rel = 0;  // max |a - b| / max|b|  over the vector
  double cosine = 1;   // a·b / (|a||b|)
  bool any_nan = false;
};
Diff Compare(const float* got, const float* want, int64_t n);

}  // namespace neodb::encoder::testing
