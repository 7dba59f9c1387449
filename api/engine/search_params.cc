#include "api/engine/search_params.h"

#include "absl/strings/str_cat.h"

namespace neodb::engine {

absl::Status SearchParams::Validate() const {
  if (k < 1 || k > kMaxSearchK) {
    return absl::InvalidArgumentError(absl::StrCat("k is ", k, "; it must be in 1..", kMaxSearchK));
  }
  if (index.ef_search < 0 || index.ef_search > kMaxEfSearch) {
    return absl::InvalidArgumentError(
        absl::StrCat("ef_search is ", index.ef_search, "; it must be in 0..", kMaxEfSearch));
  }
  if (index.nprobe < 0 || index.nprobe > kMaxNprobe) {
    return absl::InvalidArgumentError(
        absl::StrCat("nprobe is ", index.nprobe, "; it must be in 0..", kMaxNprobe));
  }
  if (filter) {
    if (absl::Status s = filter->Validate(); !s.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("malformed filter: ", s.message()));
    }
  }
  return absl::OkStatus();
}

}  // namespace neodb::engine
