#include "tests/encoder/cuda_test_util.h"

#include <cmath>

#include "encoder/cuda/cuda_check.h"

namespace neodb::encoder::testing {

std::unique_ptr<cuda::CudaContext> MakeContextOrNull(std::string* why) {
  auto ctx = cuda::CudaContext::Create(0);
  if (!ctx.ok()) {
    *why = std::string(ctx.status().message());
    return nullptr;
  }
  return std::move(ctx).value();
}

std::vector<float> RoundTo(const std::vector<float>& v, DType dtype) {
  std::vector<float> out(v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    switch (dtype) {
      case DType::kBF16:
        out[i] = BF16ToF32(F32ToBF16(v[i]));
        break;
      case DType::kF16:
        out[i] = F16ToF32(F32ToF16(v[i]));
        break;
      default:
        out[i] = v[i];
    }
  }
  return out;
}

cuda::DeviceBuffer Upload(const std::vector<float>& v, DType dtype) {
  auto buf = cuda::DeviceBuffer::Allocate(v.size() * SizeOf(dtype));
  NEODB_CHECK(buf.ok());
  if (dtype == DType::kF32) {
    NEODB_CHECK(cudaMemcpy(buf->get(), v.data(), v.size() * 4, cudaMemcpyHostToDevice) ==
                cudaSuccess);
  } else {
    std::vector<uint16_t> h(v.size());
    for (size_t i = 0; i < v.size(); ++i) {
      h[i] = dtype == DType::kBF16 ? F32ToBF16(v[i]) : F32ToF16(v[i]);
    }
    NEODB_CHECK(cudaMemcpy(buf->get(), h.data(), h.size() * 2, cudaMemcpyHostToDevice) ==
                cudaSuccess);
  }
  return std::move(buf).value();
}

cuda::DeviceBuffer UploadI32(const std::vector<int32_t>& v) {
  auto buf = cuda::DeviceBuffer::Allocate(v.size() * 4);
  NEODB_CHECK(buf.ok());
  NEODB_CHECK(cudaMemcpy(buf->get(), v.data(), v.size() * 4, cudaMemcpyHostToDevice) ==
              cudaSuccess);
  return std::move(buf).value();
}

std::vector<float> Download(const void* src, int64_t n, DType dtype) {
  NEODB_CHECK(cudaDeviceSynchronize() == cudaSuccess);
  std::vector<float> out(n);
  if (dtype == DType::kF32) {
    NEODB_CHECK(cudaMemcpy(out.data(), src, n * 4, cudaMemcpyDeviceToHost) == cudaSuccess);
  } else {
    std::vector<uint16_t> h(n);
    NEODB_CHECK(cudaMemcpy(h.data(), src, n * 2, cudaMemcpyDeviceToHost) == cudaSuccess);
    for (int64_t i = 0; i < n; ++i)
      out[i] = dtype == DType::kBF16 ? BF16ToF32(h[i]) : F16ToF32(h[i]);
  }
  return out;
}

void Poison(const cuda::DeviceBuffer& buf) {
  NEODB_CHECK(cudaMemset(buf.get(), 0xFF, buf.size()) == cudaSuccess);
}

std::vector<float> RandomVector(int64_t n, float lo, float hi, std::mt19937_64& rng) {
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

Diff Compare(const float* got, const float* want, int64_t n) {
  Diff d;
  double dot = 0, ng = 0, nw = 0, max_want = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (std::isnan(got[i]) || std::isinf(got[i])) d.any_nan = true;
    d.max_abs = std::max(d.max_abs, std::fabs(double(got[i]) - want[i]));
    max_want = std::max(max_want, std::fabs(double(want[i])));
    dot += double(got[i]) * want[i];
    ng += double(got[i]) * got[i];
    nw += double(want[i]) * want[i];
  }
  d.max_rel = max_want > 0 ? d.max_abs / max_want : d.max_abs;
  d.cosine = (ng > 0 && nw > 0) ? dot / std::sqrt(ng * nw) : (ng == nw ? 1.0 : 0.0);
  if (d.any_nan) d.cosine = 0;
  return d;
}

}  // namespace neodb::encoder::testing
