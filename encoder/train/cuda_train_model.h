#pragma once
// Training on CUDA: an architecture's training pass (ArchTrainModel<float>)
// that runs its description (models/neobert_layers.h, bert_layers.h) over the
// CUDA training op set (train/cuda/cuda_tape_ops.h) instead of the CPU's
// TapeOps, for TrainModel (its second constructor), so that every trainer
// above it (finetune, distill, adapt, pretrain, GradCache) trains on the GPU
// unchanged.
//
// What runs where, in this first slice: the encoder's forward and backward
// (every op, F32) on the device; pooling, the losses, gradient clipping and
// AdamW on the host, as before. Each Forward uploads the parameters (the
// trainer owns them on the host and updates them there); its Backward reuses
// that upload when no other pass came between; gradients come back to be
// ADDED into the host buffer. Keeping the master weights and AdamW on the
// device (train::cuda::LaunchAdamWStep exists for it) is the next step.
//
// Thread-safety: the returned model's passes are serialised by a mutex (one
// stream); concurrent callers are safe but do not overlap.

#include <memory>

#include "common/status_macros.h"
#include "encoder/train/train_model.h"
#include "encoder/train/train_params.h"

namespace neodb::encoder::train {

// The training pass of layout's architecture on CUDA device `device_index`.
// UNAVAILABLE when the build has no CUDA or there is no device (the
// driver's reason), INVALID_ARGUMENT for an index out of range,
// FAILED_PRECONDITION when the build has no kernel image for the device,
// UNIMPLEMENTED for a model the CUDA kernels do not take (attention heads
// other than 64 wide; a max_length over 11264 tokens).
absl::StatusOr<std::shared_ptr<const ArchTrainModel<float>>> MakeCudaArchTrainModel(
    const ParamLayout& layout, int device_index);

}  // namespace neodb::encoder::train
