#pragma once
// The --device flag of every command that runs the encoder: "cpu", "cuda",
// "cuda:N" or "auto", parsed once here and resolved to a concrete backend
// device (BackendOptions::device and device_index).
//
// Resolution never falls back silently: "cuda" or "cuda:N" where the build
// has no CUDA or the machine no device is an error naming what is missing;
// only "auto" chooses, and it says which device it chose.

#include <string>
#include <string_view>

#include "common/status_macros.h"
#include "encoder/backend.h"

namespace neodb::encoder {

struct DeviceRequest {
  enum class Kind : uint8_t { kCpu, kCuda, kAuto };
  Kind kind = Kind::kCpu;
  int index = 0;  // kCuda only: N of "cuda:N" ("cuda" is cuda:0)
};

// Parses "cpu", "cuda", "cuda:N" (N a non-negative decimal) or "auto".
// INVALID_ARGUMENT naming the bad value otherwise.
absl::StatusOr<DeviceRequest> ParseDevice(std::string_view text);
// "cpu", "cuda:N" or "auto" (the canonical spelling of a request).
std::string DeviceRequestName(const DeviceRequest& request);
// "cpu" or "cuda:N" for a resolved backend device.
std::string BackendDeviceName(Device device, int index);

// Sets options->device and options->device_index from `request`:
//   kCpu:  the CPU.
//   kCuda: CUDA device `index`. UNAVAILABLE when the build has no CUDA or no
//          device is visible ("no CUDA device: …"), INVALID_ARGUMENT when the
//          index is out of range.
//   kAuto: CUDA device 0 when one is visible, else the CPU.
absl::Status ResolveDevice(const DeviceRequest& request, BackendOptions* options);

}  // namespace neodb::encoder
