// MakeCudaArchTrainModel of a build without CUDA (NEODB_WITH_CUDA=OFF).
#include "encoder/train/cuda_train_model.h"

namespace neodb::encoder::train {

absl::StatusOr<std::shared_ptr<const ArchTrainModel<float>>> MakeCudaArchTrainModel(
    const ParamLayout&, int) {
  return absl::UnavailableError(
      "this neodb was built without CUDA (NEODB_WITH_CUDA=OFF): it cannot train on a GPU");
}

}  // namespace neodb::encoder::train
