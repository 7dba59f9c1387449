#pragma once
// GELU in the exact (erf) form BERT's hidden_act "gelu" names:
// GELU(u) = u/2 · (1 + erf(u/√2)), and its derivative
// GELU'(u) = Φ(u) + u·φ(u) = (1 + erf(u/√2))/2 + u · exp(−u²/2)/√(2π).
// std::erf here (training wants the true function; the inference op's
// rational approximation is within 1e-6 of it).

#include <cstdint>

namespace neodb::encoder::train {

// g[i] = GELU(u[i]) for i < n (g may alias u).
template <typename T>
void GeluForward(const T* u, int64_t n, T* g);

// du[i] = dg[i] · GELU'(u[i]) (overwritten).
template <typename T>
void GeluBackward(const T* u, const T* dg, int64_t n, T* du);

}  // namespace neodb::encoder::train
