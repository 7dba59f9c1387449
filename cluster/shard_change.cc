#include "cluster/shard_change.h"

#include "absl/strings/str_cat.h"
#include "db/codec.h"

namespace neodb::cluster {
namespace {
constexpr char kVersion = 1;
constexpr char kUpsert = 'U';
constexpr char kDelete = 'D';
}  // namespace

std::string EncodeShardChange(const ShardChange& change) {
  std::string out;
  out.push_back(kVersion);
  if (change.op == ShardChange::Op::kUpsert) {
    out.push_back(kUpsert);
    out += db::EncodeDocument(change.document);
  } else {
    out.push_back(kDelete);
    out += change.id;
  }
  return out;
}

absl::StatusOr<ShardChange> DecodeShardChange(std::string_view bytes) {
  if (bytes.size() < 2) {
    return absl::InvalidArgumentError(
        absl::StrCat("shard change of ", bytes.size(), " bytes is too short"));
  }
  if (bytes[0] != kVersion) {
    return absl::InvalidArgumentError(absl::StrCat(
        "shard change has version ", static_cast<int>(static_cast<unsigned char>(bytes[0])),
        "; this node reads version ", static_cast<int>(kVersion)));
  }
  ShardChange change;
  const std::string_view body = bytes.substr(2);
  if (bytes[1] == kUpsert) {
    absl::StatusOr<db::Document> doc = db::DecodeDocument(body);
    if (!doc.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("shard change holds a bad document: ", doc.status().message()));
    }
    change.op = ShardChange::Op::kUpsert;
    change.document = *std::move(doc);
    change.document.internal_id = 0;
    if (change.document.id.empty() || change.document.id.size() > db::kMaxDocumentIdBytes) {
      return absl::InvalidArgumentError("shard change's document has no valid id");
    }
    return change;
  }
  if (bytes[1] == kDelete) {
    if (body.empty() || body.size() > db::kMaxDocumentIdBytes) {
      return absl::InvalidArgumentError(absl::StrCat("shard tombstone's id has ", body.size(),
                                                     " bytes; ids have 1..",
                                                     db::kMaxDocumentIdBytes));
    }
    change.op = ShardChange::Op::kDelete;
    change.id = std::string(body);
    return change;
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "shard change has unknown op ", static_cast<int>(static_cast<unsigned char>(bytes[1]))));
}

}  // namespace neodb::cluster
