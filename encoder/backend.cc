#include "encoder/backend.h"

#include <algorithm>
#include <string>

#include "encoder/ops/pooling.h"

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

absl::Status ValidatePackedBatch(const PackedBatch& batch, int64_t max_length, int64_t vocab_size,
                                 std::string_view length_name) {
  if (batch.offsets.empty() || batch.offsets.front() != 0 ||
      batch.total_tokens() != static_cast<int64_t>(batch.ids.size())) {
    return absl::InvalidArgumentError("packed batch: offsets do not match the ids");
  }
  for (int64_t b = 0; b < batch.batch_size(); ++b) {
    const int64_t len = batch.length(b);
    if (len < 1 || len > max_length) {
      return absl::InvalidArgumentError("sequence " + std::to_string(b) + " has " +
                                        std::to_string(len) + " tokens; must be in [1, " +
                                        std::to_string(max_length) + "] (" +
                                        std::string(length_name) + ")");
    }
  }
  for (size_t i = 0; i < batch.ids.size(); ++i) {
    if (batch.ids[i] < 0 || batch.ids[i] >= vocab_size) {
      return absl::InvalidArgumentError(
          "token id " + std::to_string(batch.ids[i]) + " at packed position " + std::to_string(i) +
          " is outside the vocabulary [0, " + std::to_string(vocab_size) + ")");
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<Tensor> Backend::Pool(const PackedBatch& batch, Pooling pooling) {
  ASSIGN_OR_RETURN(Tensor hidden, HiddenStates(batch));
  Tensor out = Tensor::Empty({batch.batch_size(), hidden.dim(1)}, DType::kF32);
  if (batch.batch_size() > 0) ops::Pool(hidden, batch.offsets, pooling, &out);
  return out;
}

int64_t PackedBatch::longest() const {
  int64_t longest = 0;
  for (int64_t b = 0; b < batch_size(); ++b) longest = std::max(longest, length(b));
  return longest;
}

void PackedBatch::Add(const std::vector<int32_t>& seq) {
  ids.insert(ids.end(), seq.begin(), seq.end());
  offsets.push_back(static_cast<int64_t>(ids.size()));
}

}  // namespace neodb::encoder
