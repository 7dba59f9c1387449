#pragma once
// Checks on client-supplied vectors (documents of external-vector collections
// and near-vector queries), shared by the write and the read path.

#include <cstdint>
#include <span>
#include <string>

#include "absl/status/status.h"
#include "index/metric.h"

namespace neodb::engine {

// OK when `v` has `dimension` values, all finite; INVALID_ARGUMENT otherwise,
// the message starting with `what` (e.g. "document 'a': vector") and naming
// `collection`.
absl::Status CheckVector(const std::string& what, std::span<const float> v, uint32_t dimension,
                         const std::string& collection);

// OK unless `metric` is cosine and `v` has no computable direction: all
// zeros (or a squared norm that underflows) or a squared norm that overflows
// a float; the index would store NaN or zeros after normalising it.
absl::Status CheckStorableVector(const std::string& what, std::span<const float> v,
                                 index::Metric metric);

}  // namespace neodb::engine
