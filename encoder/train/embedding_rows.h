#pragma once
// The rows of a batch grouped by token id, which the CUDA embedding backward
// (train/cuda/train_kernels.h, LaunchEmbeddingBackward) reads so that each
// table row's gradient has one owner summing its tokens in a fixed order: no
// atomics, the same sum from run to run. Built on the host (the ids are
// there) and plain data, so the CPU tests check it.

#include <cstdint>
#include <vector>

namespace neodb::encoder::train {

struct EmbeddingRows {
  std::vector<int32_t> unique_ids;  // the batch's distinct ids, increasing
  std::vector<int32_t> row_begin;   // unique_ids.size() + 1 entries, row_begin[0] = 0
  // The rows holding unique_ids[i]: token_rows[row_begin[i], row_begin[i + 1]),
  // increasing.
  std::vector<int32_t> token_rows;
};

// REQUIRES: rows < 2^31.
EmbeddingRows EmbeddingRowsById(const int32_t* ids, int64_t rows);

}  // namespace neodb::encoder::train
