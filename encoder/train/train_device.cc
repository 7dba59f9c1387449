#include "encoder/train/train_device.h"

#include "absl/strings/str_cat.h"
#include "encoder/device.h"

namespace neodb::encoder::train {

absl::Status CheckTrainingDevice(std::string_view device, std::string* note) {
  ASSIGN_OR_RETURN(const DeviceRequest request, ParseDevice(device));
  switch (request.kind) {
    case DeviceRequest::Kind::kCpu:
      return absl::OkStatus();
    case DeviceRequest::Kind::kAuto:
      if (note != nullptr) {
        *note = "--device auto: training runs on the CPU (training on CUDA is not implemented yet)";
      }
      return absl::OkStatus();
    case DeviceRequest::Kind::kCuda:
      return absl::FailedPreconditionError(
          absl::StrCat("--device ", DeviceRequestName(request),
                       ": training on CUDA is not implemented yet (the backward ops are CPU "
                       "only); use --device cpu"));
  }
  return absl::InvalidArgumentError("unknown device request");
}

}  // namespace neodb::encoder::train
