#include "engine/search_params.h"

#include <cmath>

#include "absl/strings/str_cat.h"

namespace neodb::engine {

absl::StatusOr<SearchMode> ParseSearchMode(std::string_view name) {
  if (name == "vector") return SearchMode::kVector;
  if (name == "keyword") return SearchMode::kKeyword;
  if (name == "hybrid") return SearchMode::kHybrid;
  return absl::InvalidArgumentError(
      absl::StrCat("mode '", std::string(name), "' is not one of vector, keyword, hybrid"));
}

std::string_view SearchModeName(SearchMode mode) {
  switch (mode) {
    case SearchMode::kKeyword:
      return "keyword";
    case SearchMode::kHybrid:
      return "hybrid";
    default:
      return "vector";
  }
}

absl::Status SearchParams::Validate() const {
  if (k < 1 || k > kMaxSearchK) {
    return absl::InvalidArgumentError(absl::StrCat("k is ", k, "; it must be in 1..", kMaxSearchK));
  }
  if (offset < 0 || offset > kMaxSearchK - k) {
    return absl::InvalidArgumentError(absl::StrCat("offset is ", offset, "; offset + k (", k,
                                                   ") must be at most ", kMaxSearchK));
  }
  if (score_threshold && !std::isfinite(*score_threshold)) {
    return absl::InvalidArgumentError("score_threshold must be a finite number");
  }
  if (group_by) {
    if (group_by->field.empty()) {
      return absl::InvalidArgumentError("group_by.field must name a metadata field");
    }
    if (group_by->groups < 1 || group_by->groups > kMaxSearchK) {
      return absl::InvalidArgumentError(absl::StrCat("group_by.groups is ", group_by->groups,
                                                     "; it must be in 1..", kMaxSearchK));
    }
    if (group_by->group_size < 1 || group_by->group_size > kMaxGroupSize) {
      return absl::InvalidArgumentError(absl::StrCat(
          "group_by.group_size is ", group_by->group_size, "; it must be in 1..", kMaxGroupSize));
    }
    if (static_cast<int64_t>(group_by->groups) * group_by->group_size > kMaxSearchK) {
      return absl::InvalidArgumentError(absl::StrCat(
          "group_by.groups * group_by.group_size is ",
          static_cast<int64_t>(group_by->groups) * group_by->group_size, "; it must be at most ",
          kMaxSearchK));
    }
    if (offset != 0) {
      return absl::InvalidArgumentError("offset cannot be combined with group_by");
    }
  }
  if (index.ef_search < 0 || index.ef_search > kMaxEfSearch) {
    return absl::InvalidArgumentError(
        absl::StrCat("ef_search is ", index.ef_search, "; it must be in 0..", kMaxEfSearch));
  }
  if (index.nprobe < 0 || index.nprobe > kMaxNprobe) {
    return absl::InvalidArgumentError(
        absl::StrCat("nprobe is ", index.nprobe, "; it must be in 0..", kMaxNprobe));
  }
  switch (mode) {
    case SearchMode::kVector:
    case SearchMode::kKeyword:
    case SearchMode::kHybrid:
      break;
    default:
      return absl::InvalidArgumentError("unknown search mode");
  }
  if (fusion) {
    if (!(fusion->alpha >= 0 && fusion->alpha <= 1)) {
      return absl::InvalidArgumentError(
          absl::StrCat("alpha is ", fusion->alpha, "; it must be in 0..1"));
    }
    if (!(fusion->max_alpha >= 0 && fusion->max_alpha <= 1)) {
      return absl::InvalidArgumentError(
          absl::StrCat("max_alpha is ", fusion->max_alpha, "; it must be in 0..1"));
    }
    if (fusion->rrf_k < 0 || fusion->rrf_k > 1000000) {
      return absl::InvalidArgumentError(
          absl::StrCat("rrf_k is ", fusion->rrf_k, "; it must be in 0..1000000"));
    }
    if (fusion->agreement_depth < 1 || fusion->agreement_depth > kMaxSearchK) {
      return absl::InvalidArgumentError(absl::StrCat("agreement_depth is ", fusion->agreement_depth,
                                                     "; it must be in 1..", kMaxSearchK));
    }
    switch (fusion->method) {
      case keyword::FusionMethod::kAdaptive:
      case keyword::FusionMethod::kWeighted:
      case keyword::FusionMethod::kReciprocalRank:
        break;
      default:
        return absl::InvalidArgumentError("unknown fusion method");
    }
  }
  if (filter) {
    if (absl::Status s = filter->Validate(); !s.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("malformed filter: ", s.message()));
    }
  }
  return absl::OkStatus();
}

}  // namespace neodb::engine
