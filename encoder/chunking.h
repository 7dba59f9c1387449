#pragma once
// Framing texts into encoder sequences and combining the per-sequence vectors
// back into one vector per text. Split out of Encoder::Embed so a caller that
// schedules the forward passes itself (the server's embed batcher, which
// interleaves the chunks of several requests and stops a cancelled one
// between passes) computes exactly what Encoder::Embed computes.

#include <cstdint>
#include <vector>

#include "encoder/embedding.h"

namespace neodb::encoder {

// Texts as framed sequences: text i owns sequences
// [first_sequence[i], first_sequence[i + 1]), each [CLS] prefix window [SEP].
struct FramedTexts {
  std::vector<std::vector<int32_t>> sequences;
  std::vector<int64_t> first_sequence;  // texts + 1 entries
  int64_t texts() const { return static_cast<int64_t>(first_sequence.size()) - 1; }
  int64_t total_tokens() const;
};

// One Embedding per text from `pooled`, the unnormalised pooled vector of
// every sequence of `framed` (row s = sequence s, `dim` floats each): a text
// of several chunks gets the token-weighted mean of its chunk vectors
// (accumulated in double). `normalize`: L2-normalise each result.
// REQUIRES: pooled holds framed.sequences.size() * dim floats.
std::vector<Embedding> CombineChunks(const FramedTexts& framed, const float* pooled, int64_t dim,
                                     bool normalize);

// L2-normalises v[0, n) in place; a zero vector stays zero rather than NaN.
void NormalizeRow(float* v, int64_t n);

}  // namespace neodb::encoder
