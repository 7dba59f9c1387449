#pragma once
// Compact binary encodings of the records Store keeps in RocksDB. Decoders
// validate strictly: a truncated or corrupt record is a DATA_LOSS status,
// never undefined behaviour. Exposed for Store and for tests.

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "db/changelog_record.h"
#include "db/collection_spec.h"
#include "db/document.h"

namespace neodb::db {

std::string EncodeDocument(const Document& doc);
absl::StatusOr<Document> DecodeDocument(std::string_view bytes);

std::string EncodeCollectionSpec(const CollectionSpec& spec);
absl::StatusOr<CollectionSpec> DecodeCollectionSpec(std::string_view bytes);

std::string EncodeChangelogRecord(const ChangelogRecord& record);
absl::StatusOr<ChangelogRecord> DecodeChangelogRecord(std::string_view bytes);

// Big-endian fixed 64-bit (keys sort numerically).
std::string EncodeBigEndian64(uint64_t v);
absl::StatusOr<uint64_t> DecodeBigEndian64(std::string_view bytes);

}  // namespace neodb::db
