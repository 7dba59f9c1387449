#include "db/collection_spec.h"

#include "absl/strings/str_cat.h"

namespace neodb::db {
namespace {

constexpr size_t kMaxInstructionBytes = 4096;
constexpr size_t kMaxSpecStringBytes = 256;
constexpr size_t kMaxModelDirBytes = 4096;

bool Printable(std::string_view s) {
  for (unsigned char c : s) {
    if (c < 0x20 || c > 0x7e) return false;
  }
  return true;
}

}  // namespace

absl::Status ValidateCollectionName(std::string_view name) {
  if (name.empty()) return absl::InvalidArgumentError("collection name is empty");
  if (name.size() > kMaxCollectionNameBytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "collection name is ", name.size(), " characters; the limit is ", kMaxCollectionNameBytes));
  }
  for (char c : name) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '-';
    if (!ok) {
      return absl::InvalidArgumentError(
          "collection name may contain only letters, digits, '_' and '-'");
    }
  }
  return absl::OkStatus();
}

absl::Status ValidateCollectionSpec(const CollectionSpec& spec) {
  if (auto s = ValidateCollectionName(spec.name); !s.ok()) return s;
  if (spec.dimension < 1 || spec.dimension > kMaxDimension) {
    return absl::InvalidArgumentError(
        absl::StrCat("dimension ", spec.dimension, " is outside 1..", kMaxDimension));
  }
  if (spec.index_spec.empty() || spec.index_spec.size() > kMaxSpecStringBytes ||
      !Printable(spec.index_spec)) {
    return absl::InvalidArgumentError("index spec must be 1..256 printable ASCII characters");
  }
  // metric, pooling and overflow belong to the index and the encoder: the
  // engine parses them (index::ParseMetric, engine/embed_settings.h). The store
  // keeps them as the short printable strings they are.
  for (const std::string* v : {&spec.metric, &spec.pooling, &spec.overflow, &spec.vector_source,
                                &spec.analyzer, &spec.title_field, &spec.precision,
                                &spec.fusion}) {
    if (v->size() > kMaxSpecStringBytes || !Printable(*v)) {
      return absl::InvalidArgumentError(
          "metric, pooling, overflow, vector source, analyzer, title field, precision and fusion must be "
          "printable ASCII (at most 256 bytes)");
    }
  }
  if (spec.query_instruction.size() > kMaxInstructionBytes ||
      spec.document_instruction.size() > kMaxInstructionBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("instructions are limited to ", kMaxInstructionBytes, " bytes"));
  }
  if (spec.model_id.size() > kMaxSpecStringBytes) {
    return absl::InvalidArgumentError("model id is longer than 256 bytes");
  }
  if (spec.model_dir.size() > kMaxModelDirBytes ||
      spec.previous_model_dir.size() > kMaxModelDirBytes) {
    return absl::InvalidArgumentError("model directory is longer than 4096 bytes");
  }
  if (spec.engine_state.size() > kMaxModelDirBytes) {
    return absl::InvalidArgumentError("engine state is longer than 4096 bytes");
  }
  return absl::OkStatus();
}

}  // namespace neodb::db
