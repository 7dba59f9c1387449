#pragma once
// The --device flag of the training commands (`neodb finetune`, `distill`,
// `adapt`, `pretrain`) and the training pass it selects:
//   "cpu"            the CPU (TapeOps);
//   "cuda", "cuda:N" CUDA device N (the CUDA training op set,
//                    cuda_train_model.h); UNAVAILABLE "--device cuda:N: no
//                    CUDA device to train on: …" when the build has no CUDA
//                    or the machine no device, INVALID_ARGUMENT when N is
//                    out of range — never a silent CPU run in its place;
//   "auto"           the CPU, with `note` saying why: training on CUDA is
//                    opt-in (--device cuda) until its gradient checks have
//                    run on a GPU (bench/run_gpu_train.sh);
//   anything else    INVALID_ARGUMENT (encoder::ParseDevice).

#include <memory>
#include <string>
#include <string_view>

#include "common/status_macros.h"
#include "encoder/train/train_model.h"
#include "encoder/train/train_params.h"

namespace neodb::encoder::train {

// Where a training run's encoder passes run. Default: the CPU.
struct TrainingDevice {
  bool cuda = false;
  int index = 0;  // the CUDA device (cuda only)
};

// "cpu" or "cuda:N".
std::string TrainingDeviceName(const TrainingDevice& device);

// Resolves --device as above; `note` (may be null) is set for "auto" and
// left empty otherwise.
absl::StatusOr<TrainingDevice> ResolveTrainingDevice(std::string_view device, std::string* note);

// The encoder's training pass for `layout` on `device`: nullptr for the CPU
// (TrainModel's own), the CUDA pass (MakeCudaArchTrainModel) otherwise.
absl::StatusOr<std::shared_ptr<const ArchTrainModel<float>>> MakeTrainingPass(
    const ParamLayout& layout, const TrainingDevice& device);

}  // namespace neodb::encoder::train
