#pragma once
// Rotary position embedding, LLaMA convention (NEOBERT.md §3): adjacent pairs
// (x[2i], x[2i+1]) rotate by angle p·θ_i, θ_i = theta^(−2i/D). The backward
// pass of a rotation is the rotation by the opposite angle.

#include <cstdint>
#include <vector>

namespace neodb::encoder::train {

// cos/sin of p·θ_i for p in [0, max_positions), i in [0, head_dim/2).
// Angles are computed in T as positions × inverse frequencies, as the
// reference implementation does.
template <typename T>
struct RopeTable {
  RopeTable(int64_t max_positions, int64_t head_dim, double theta);
  int64_t max_positions;
  int64_t half;        // head_dim / 2
  std::vector<T> cos;  // [max_positions, half]
  std::vector<T> sin;
};

// Rotates, in place, `heads` vectors of length 2·table.half per row of a
// [rows, ld] matrix; head h's vector starts at column col0 + h·head_stride.
// positions[r] is row r's position in its sequence (< table.max_positions).
// inverse = true rotates by −angle (the backward pass).
template <typename T>
void RopeApply(T* data, int64_t rows, int64_t ld, const int32_t* positions, int64_t heads,
               int64_t col0, int64_t head_stride, const RopeTable<T>& table, bool inverse);

}  // namespace neodb::encoder::train
