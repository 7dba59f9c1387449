#include "encoder/train/linear.h"

#include "encoder/train/blas.h"

namespace neodb::encoder::train {

template <typename T>
void LinearForward(const T* x, const T* w, int64_t rows, int64_t in, int64_t out, T* y) {
  Gemm<T>(false, true, rows, out, in, T(1), x, in, w, in, T(0), y, out);
}

template <typename T>
void LinearBackward(const T* x, const T* w, const T* dy, int64_t rows, int64_t in, int64_t out,
                    T* dx, T* dw) {
  if (dx != nullptr) Gemm<T>(false, false, rows, in, out, T(1), dy, out, w, in, T(1), dx, in);
  if (dw != nullptr && rows > 0) {
    Gemm<T>(true, false, out, in, rows, T(1), dy, out, x, in, T(1), dw, in);
  }
}

template <typename T>
void AddBias(const T* b, int64_t rows, int64_t out, T* y) {
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < out; ++c) y[r * out + c] += b[c];
  }
}

template <typename T>
void BiasBackward(const T* dy, int64_t rows, int64_t out, T* db) {
  if (db == nullptr) return;
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < out; ++c) db[c] += dy[r * out + c];
  }
}

template void AddBias<float>(const float*, int64_t, int64_t, float*);
template void AddBias<double>(const double*, int64_t, int64_t, double*);
template void BiasBackward<float>(const float*, int64_t, int64_t, float*);
template void BiasBackward<double>(const double*, int64_t, int64_t, double*);
template void LinearForward<float>(const float*, const float*, int64_t, int64_t, int64_t, float*);
template void LinearForward<double>(const double*, const double*, int64_t, int64_t, int64_t,
                                    double*);
template void LinearBackward<float>(const float*, const float*, const float*, int64_t, int64_t,
                                    int64_t, float*, float*);
template void LinearBackward<double>(const double*, const double*, const double*, int64_t, int64_t,
                                     int64_t, double*, double*);

}  // namespace neodb::encoder::train
