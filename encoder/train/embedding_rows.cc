#include "encoder/train/embedding_rows.h"

#include <algorithm>
#include <numeric>

#include "common/status_macros.h"

namespace neodb::encoder::train {

EmbeddingRows EmbeddingRowsById(const int32_t* ids, int64_t rows) {
  NEODB_CHECK(rows >= 0 && rows < (int64_t{1} << 31));
  EmbeddingRows out;
  out.token_rows.resize(static_cast<size_t>(rows));
  std::iota(out.token_rows.begin(), out.token_rows.end(), 0);
  // Stable: equal ids keep their rows in increasing order.
  std::stable_sort(out.token_rows.begin(), out.token_rows.end(),
                   [ids](int32_t a, int32_t b) { return ids[a] < ids[b]; });
  out.row_begin.push_back(0);
  for (int32_t i = 0; i < static_cast<int32_t>(rows); ++i) {
    const int32_t id = ids[out.token_rows[static_cast<size_t>(i)]];
    if (out.unique_ids.empty() || out.unique_ids.back() != id) {
      if (!out.unique_ids.empty()) out.row_begin.push_back(i);
      out.unique_ids.push_back(id);
    }
  }
  if (!out.unique_ids.empty()) out.row_begin.push_back(static_cast<int32_t>(rows));
  return out;
}

}  // namespace neodb::encoder::train
