#include "encoder/train/rope.h"

#include <cmath>

#include "common/status_macros.h"

namespace neodb::encoder::train {

template <typename T>
RopeTable<T>::RopeTable(int64_t max_positions, int64_t head_dim, double theta)
    : max_positions(max_positions), half(head_dim / 2) {
  NEODB_CHECK(head_dim % 2 == 0 && max_positions >= 0);
  cos.resize(static_cast<size_t>(max_positions * half));
  sin.resize(cos.size());
  std::vector<T> inv_freq(static_cast<size_t>(half));
  for (int64_t i = 0; i < half; ++i) {
    inv_freq[i] =
        T(1) / std::pow(static_cast<T>(theta), static_cast<T>(2 * i) / static_cast<T>(head_dim));
  }
  for (int64_t p = 0; p < max_positions; ++p) {
    for (int64_t i = 0; i < half; ++i) {
      const T angle = static_cast<T>(p) * inv_freq[i];
      cos[p * half + i] = std::cos(angle);
      sin[p * half + i] = std::sin(angle);
    }
  }
}

template <typename T>
void RopeApply(T* data, int64_t rows, int64_t ld, const int32_t* positions, int64_t heads,
               int64_t col0, int64_t head_stride, const RopeTable<T>& table, bool inverse) {
  const int64_t half = table.half;
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t p = positions[r];
    NEODB_CHECK(p >= 0 && p < table.max_positions);
    const T* cs = table.cos.data() + p * half;
    const T* sn = table.sin.data() + p * half;
    for (int64_t h = 0; h < heads; ++h) {
      T* v = data + r * ld + col0 + h * head_stride;
      for (int64_t i = 0; i < half; ++i) {
        const T c = cs[i];
        const T s = inverse ? -sn[i] : sn[i];
        const T a = v[2 * i];
        const T b = v[2 * i + 1];
        v[2 * i] = a * c - b * s;
        v[2 * i + 1] = a * s + b * c;
      }
    }
  }
}

template struct RopeTable<float>;
template struct RopeTable<double>;
template void RopeApply<float>(float*, int64_t, int64_t, const int32_t*, int64_t, int64_t, int64_t,
                               const RopeTable<float>&, bool);
template void RopeApply<double>(double*, int64_t, int64_t, const int32_t*, int64_t, int64_t,
                                int64_t, const RopeTable<double>&, bool);

}  // namespace neodb::encoder::train
