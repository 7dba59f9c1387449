#include "encoder/train/gelu.h"

#include <cmath>

namespace neodb::encoder::train {

template <typename T>
void GeluForward(const T* u, int64_t n, T* g) {
  for (int64_t i = 0; i < n; ++i) {
    const double v = u[i];
    g[i] = static_cast<T>(0.5 * v * (1.0 + std::erf(v * M_SQRT1_2)));
  }
}

template <typename T>
void GeluBackward(const T* u, const T* dg, int64_t n, T* du) {
  constexpr double kInvSqrt2Pi = 0.39894228040143267794;  // 1/√(2π)
  for (int64_t i = 0; i < n; ++i) {
    const double v = u[i];
    const double d = 0.5 * (1.0 + std::erf(v * M_SQRT1_2)) + v * kInvSqrt2Pi * std::exp(-0.5 * v * v);
    du[i] = static_cast<T>(dg[i] * d);
  }
}

template void GeluForward<float>(const float*, int64_t, float*);
template void GeluForward<double>(const double*, int64_t, double*);
template void GeluBackward<float>(const float*, const float*, int64_t, float*);
template void GeluBackward<double>(const double*, const double*, int64_t, double*);

}  // namespace neodb::encoder::train
