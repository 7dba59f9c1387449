#pragma once
// SwiGLU gate of the NeoBERT FFN (NEOBERT.md §3): u = [g | l] (2F per row),
// s = SiLU(g) ⊙ l with SiLU(z) = z·sigmoid(z); the FIRST half is gated.

#include <cstdint>

namespace neodb::encoder::train {

// u [rows, 2F] → s [rows, F] (overwritten).
template <typename T>
void SwiGluForward(const T* u, int64_t rows, int64_t ffn_dim, T* s);

// Given ds [rows, F], writes (overwrites) du [rows, 2F].
template <typename T>
void SwiGluBackward(const T* u, const T* ds, int64_t rows, int64_t ffn_dim, T* du);

}  // namespace neodb::encoder::train
