#include "encoder/device.h"

#include <charconv>

#include "absl/strings/str_cat.h"
#include "encoder/cuda/cuda_backend.h"

namespace neodb::encoder {

absl::StatusOr<DeviceRequest> ParseDevice(std::string_view text) {
  DeviceRequest r;
  if (text == "cpu") return r;
  if (text == "auto") {
    r.kind = DeviceRequest::Kind::kAuto;
    return r;
  }
  if (text == "cuda") {
    r.kind = DeviceRequest::Kind::kCuda;
    return r;
  }
  constexpr std::string_view kCudaColon = "cuda:";
  if (text.substr(0, kCudaColon.size()) == kCudaColon && text.size() > kCudaColon.size()) {
    const std::string_view digits = text.substr(kCudaColon.size());
    int index = -1;
    auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), index);
    if (ec == std::errc() && end == digits.data() + digits.size() && index >= 0 &&
        digits.front() != '+' && digits.front() != '-') {
      r.kind = DeviceRequest::Kind::kCuda;
      r.index = index;
      return r;
    }
  }
  return absl::InvalidArgumentError(
      absl::StrCat("device must be cpu, cuda, cuda:N or auto, not '", std::string(text), "'"));
}

std::string DeviceRequestName(const DeviceRequest& request) {
  switch (request.kind) {
    case DeviceRequest::Kind::kCpu: return "cpu";
    case DeviceRequest::Kind::kCuda: return absl::StrCat("cuda:", request.index);
    case DeviceRequest::Kind::kAuto: return "auto";
  }
  return "?";
}

std::string BackendDeviceName(Device device, int index) {
  return device == Device::kCuda ? absl::StrCat("cuda:", index) : "cpu";
}

absl::Status ResolveDevice(const DeviceRequest& request, BackendOptions* options) {
  switch (request.kind) {
    case DeviceRequest::Kind::kCpu:
      options->device = Device::kCpu;
      options->device_index = 0;
      return absl::OkStatus();
    case DeviceRequest::Kind::kCuda: {
      absl::StatusOr<int> count = CudaDeviceCount();
      if (!count.ok()) {
        return absl::UnavailableError(
            absl::StrCat("--device ", DeviceRequestName(request),
                         " asks for CUDA, but: ", count.status().message()));
      }
      if (request.index >= *count) {
        return absl::InvalidArgumentError(absl::StrCat("--device ", DeviceRequestName(request),
                                                       ": only ", *count,
                                                       " CUDA device(s) visible"));
      }
      options->device = Device::kCuda;
      options->device_index = request.index;
      return absl::OkStatus();
    }
    case DeviceRequest::Kind::kAuto: {
      absl::StatusOr<int> count = CudaDeviceCount();
      const bool gpu = count.ok() && *count > 0;
      options->device = gpu ? Device::kCuda : Device::kCpu;
      options->device_index = 0;
      return absl::OkStatus();
    }
  }
  return absl::InvalidArgumentError("unknown device request");
}

}  // namespace neodb::encoder
