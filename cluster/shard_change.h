#pragma once
// ShardChange: what one message of a shard's log says: a document as the
// node that took the write made it (text, metadata, vector and the model
// that made it: replicas never embed), or a tombstone for a document id.
//
// Wire form (the message's payload): one version byte (1), one op byte
// ('U' upsert, 'D' delete), then db::EncodeDocument's bytes (upsert) or the
// id's bytes (delete). A message comes from another node: DecodeShardChange
// checks everything (and the store checks the document again).

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "db/document.h"

namespace neodb::cluster {

struct ShardChange {
  enum class Op { kUpsert, kDelete };
  Op op = Op::kUpsert;
  db::Document document;  // kUpsert (internal_id unused: each replica numbers its own)
  std::string id;         // kDelete

  const std::string& doc_id() const { return op == Op::kUpsert ? document.id : id; }
};

std::string EncodeShardChange(const ShardChange& change);
// INVALID_ARGUMENT naming what is wrong with `bytes`.
absl::StatusOr<ShardChange> DecodeShardChange(std::string_view bytes);

}  // namespace neodb::cluster
