#include "encoder/train/train_device.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "encoder/cuda/cuda_backend.h"
#include "encoder/device.h"
#include "encoder/train/cuda_train_model.h"

namespace neodb::encoder::train {

std::string TrainingDeviceName(const TrainingDevice& device) {
  return device.cuda ? absl::StrCat("cuda:", device.index) : "cpu";
}

absl::StatusOr<TrainingDevice> ResolveTrainingDevice(std::string_view device, std::string* note) {
  ASSIGN_OR_RETURN(const DeviceRequest request, ParseDevice(device));
  switch (request.kind) {
    case DeviceRequest::Kind::kCpu:
      return TrainingDevice{};
    case DeviceRequest::Kind::kAuto:
      if (note != nullptr) {
        *note =
            "--device auto: training runs on the CPU (training on CUDA is opt-in: --device cuda)";
      }
      return TrainingDevice{};
    case DeviceRequest::Kind::kCuda: {
      const absl::StatusOr<int> count = CudaDeviceCount();
      if (!count.ok()) {
        absl::string_view why = count.status().message();
        absl::ConsumePrefix(&why, "no CUDA device: ");
        return absl::UnavailableError(absl::StrCat("--device ", DeviceRequestName(request),
                                                   ": no CUDA device to train on (", why,
                                                   "); use --device cpu"));
      }
      if (request.index >= *count) {
        return absl::InvalidArgumentError(absl::StrCat("--device ", DeviceRequestName(request),
                                                       ": only ", *count,
                                                       " CUDA device(s) visible"));
      }
      return TrainingDevice{true, request.index};
    }
  }
  return absl::InvalidArgumentError("unknown device request");
}

absl::StatusOr<std::shared_ptr<const ArchTrainModel<float>>> MakeTrainingPass(
    const ParamLayout& layout, const TrainingDevice& device) {
  if (!device.cuda) return std::shared_ptr<const ArchTrainModel<float>>();
  return MakeCudaArchTrainModel(layout, device.index);
}

}  // namespace neodb::encoder::train
