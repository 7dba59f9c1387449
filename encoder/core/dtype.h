#pragma once
// Element types the encoder stores and computes in, and the scalar
// conversions between them. Conversions round to nearest even.

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace neodb::encoder {

enum class DType : uint8_t { kF32, kF16, kBF16, kI32, kF64 };
enum class Device : uint8_t { kCpu, kCuda };

constexpr size_t SizeOf(DType t) {
  switch (t) {
    case DType::kF32: return 4;
    case DType::kF16: return 2;
    case DType::kBF16: return 2;
    case DType::kI32: return 4;
    case DType::kF64: return 8;
  }
  return 0;
}

// "F32", "F16", "BF16", "I32", "F64" — the safetensors spelling.
std::string_view DTypeName(DType t);
std::string_view DeviceName(Device d);

inline float BF16ToF32(uint16_t h) {
  uint32_t bits = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

inline uint16_t F32ToBF16(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((bits >> 16) | 0x40);  // NaN stays NaN
  bits += 0x7fffu + ((bits >> 16) & 1u);  // round to nearest even
  return static_cast<uint16_t>(bits >> 16);
}

float F16ToF32(uint16_t h);
uint16_t F32ToF16(float f);

}  // namespace neodb::encoder
