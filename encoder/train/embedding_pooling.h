#pragma once
// The two ends of the encoder: the token-embedding gather (whose backward is a
// scatter-add into the embedding table) and pooling of the final hidden
// states per sequence of a packed batch (NEOBERT.md §5).

#include <cstdint>

namespace neodb::encoder::train {

// x[t] = table[ids[t]] for t < rows; x is [rows, dim].
template <typename T>
void EmbeddingForward(const int32_t* ids, int64_t rows, const T* table, int64_t dim, T* x);

// d_table[ids[t]] += dx[t] (repeated ids accumulate).
template <typename T>
void EmbeddingBackward(const int32_t* ids, int64_t rows, const T* dx, int64_t dim, T* d_table);

// Masked mean pooling: pooled[b] = mean of rows [offsets[b], offsets[b+1]) of
// h — every token of the sequence, [CLS] and [SEP] included. REQUIRES: no
// empty sequence.
template <typename T>
void MeanPoolForward(const T* h, const int64_t* offsets, int64_t batch, int64_t dim, T* pooled);

// ADDS dh[t] += d_pooled[b] / length(b) for every row t of sequence b.
template <typename T>
void MeanPoolBackward(const T* d_pooled, const int64_t* offsets, int64_t batch, int64_t dim, T* dh);

// [CLS] pooling (BGE trains and serves with it): pooled[b] = h[offsets[b]].
template <typename T>
void ClsPoolForward(const T* h, const int64_t* offsets, int64_t batch, int64_t dim, T* pooled);

// ADDS dh[offsets[b]] += d_pooled[b].
template <typename T>
void ClsPoolBackward(const T* d_pooled, const int64_t* offsets, int64_t batch, int64_t dim, T* dh);

// Learned absolute positions (BERT): x[t] += table[t − offsets[b]] for every
// token t of sequence b (positions restart in every packed sequence).
template <typename T>
void PositionEmbeddingForward(const T* table, const int64_t* offsets, int64_t batch, int64_t dim,
                              T* x);

// d_table[t − offsets[b]] += dx[t].
template <typename T>
void PositionEmbeddingBackward(const T* dx, const int64_t* offsets, int64_t batch, int64_t dim,
                               T* d_table);

}  // namespace neodb::encoder::train
