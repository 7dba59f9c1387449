#include "encoder/backend.h"

#include <string>

namespace neodb::encoder {

std::string_view PrecisionName(Precision p) {
  switch (p) {
    case Precision::kF32: return "f32";
    case Precision::kBf16: return "bf16";
    case Precision::kInt8: return "int8";
  }
  return "?";
}

absl::StatusOr<Precision> ParsePrecision(std::string_view name) {
  for (Precision p : {Precision::kF32, Precision::kBf16, Precision::kInt8}) {
    if (name == PrecisionName(p)) return p;
  }
  return absl::InvalidArgumentError("precision must be f32, bf16 or int8, not '" +
                                    std::string(name) + "'");
}

void PackedBatch::Add(const std::vector<int32_t>& seq) {
  ids.insert(ids.end(), seq.begin(), seq.end());
  offsets.push_back(static_cast<int64_t>(ids.size()));
}

}  // namespace neodb::encoder
