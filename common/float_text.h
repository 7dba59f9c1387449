#pragma once
// Floats as JSON number text, written by us rather than by a JSON library.
//
// Why: a JSON writer takes a double. A float widened to double prints with 17
// digits (-0.17081760000000001), and even the double nearest the float's
// shortest decimal is not printed shortest by every writer (nlohmann-json's
// Grisu2 prints about one value in eight long). std::to_chars(float) yields the
// float's own shortest round-trip form — at most 9 significant digits, read
// back by strtof to the same float — independent of the CPU and of which BLAS
// kernel computed the value.

#include <charconv>
#include <cmath>
#include <span>
#include <string>

namespace neodb {

// Appends `v` as its shortest round-trip decimal in %g style ("-0.1708176",
// "1e-07", "3.408979e+10"). JSON has no NaN or infinity: those append "null".
inline void AppendFloatJson(std::string* out, float v) {
  if (!std::isfinite(v)) {
    out->append("null");
    return;
  }
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof(buf), v, std::chars_format::general);
  out->append(buf, r.ptr);
}

// Appends "[a,b,…]" with every element as AppendFloatJson writes it.
inline void AppendFloatJsonArray(std::string* out, std::span<const float> values) {
  out->push_back('[');
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out->push_back(',');
    AppendFloatJson(out, values[i]);
  }
  out->push_back(']');
}

}  // namespace neodb
