#include "encoder/backend.h"

namespace neodb::encoder {

void PackedBatch::Add(const std::vector<int32_t>& seq) {
  ids.insert(ids.end(), seq.begin(), seq.end());
  offsets.push_back(static_cast<int64_t>(ids.size()));
}

}  // namespace neodb::encoder
