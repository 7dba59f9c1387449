#pragma once
// Training parameters to and from a BERT checkpoint directory (Hugging Face
// layout: config.json + model.safetensors, tokenizer and sentence-transformers
// files beside them).
//
// The flat ParamLayout of a BERT holds the checkpoint's tensors exactly as
// stored — position and token-type embeddings apart, q, k, v apart — so
// load → save → load → save is bit-identical in tensors (the inference
// loader folds and stacks them; training must not, or a save could not give
// the originals back).

#include <string>

#include "common/status_macros.h"
#include "encoder/core/tensor.h"
#include "encoder/train/train_params.h"

namespace neodb::encoder::train {

// The encoder of the BERT checkpoint in `dir` (any stored dtype: F32, F16,
// BF16; names with or without "bert.") as F32 training parameters. The
// directory is first validated by LoadBertCheckpoint (config, every name and
// shape), so its errors are the inference loader's. When model_id != nullptr
// it receives the checkpoint's id (as LoadModel reports it).
absl::StatusOr<TrainParams<float>> LoadBertTrainParams(const std::string& dir,
                                                       std::string* model_id = nullptr);

// Writes `params` into the existing directory `out_dir` as a checkpoint
// LoadModel loads as BERT: model.safetensors in `dtype` (F32, F16 or BF16)
// with the Hugging Face names, no prefix, the pooler and task heads dropped
// (training never touched them); and every file of `source_dir` that
// describes the model other than its weights — config.json, tokenizer files,
// sentence-transformers files (modules.json, sentence_bert_config.json,
// config_sentence_transformers.json, the numbered module directories such as
// 1_Pooling/), neodb_model.json — copied as they are; not adapt.json or a
// previous run's lineage/report files (records of the old weights). REQUIRES: params is a
// BERT layout.
absl::Status SaveBertTrainParams(const TrainParams<float>& params, const std::string& source_dir,
                                 const std::string& out_dir, DType dtype);

}  // namespace neodb::encoder::train
