#pragma once
// Each architecture's parameters as the training op sets' weight handles
// (TrainWeight: offsets into the flat buffer of a ParamLayout), shared by the
// CPU training pass (train_model.cc, over TapeOps) and the CUDA one
// (cuda/cuda_train_model.cc, over CudaTapeOps): both hand the same
// description the same weights.

#include "encoder/models/bert_layers.h"
#include "encoder/models/neobert_layers.h"
#include "encoder/train/tape_ops.h"
#include "encoder/train/train_params.h"

namespace neodb::encoder::train {

// REQUIRES: layout.architecture() is NeoBERT.
models::NeoBertParams<TrainWeight> NeoBertTrainWeights(const ParamLayout& layout);
// REQUIRES: layout.architecture() is BERT. Its query, key and value (the
// Hugging Face tensors) are read as one stacked qkv.
models::BertParams<TrainWeight> BertTrainWeights(const ParamLayout& layout);

}  // namespace neodb::encoder::train
