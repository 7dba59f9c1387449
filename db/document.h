#pragma once
// A stored document: user id, text, typed metadata, its embedding and the id
// of the model that produced the embedding.

#include <cstdint>
#include <string>
#include <vector>

#include "db/metadata.h"

namespace neodb::db {

// Largest user document id, in bytes. Any bytes are allowed except that the id
// must be non-empty (the API layer may restrict further, e.g. to UTF-8).
inline constexpr size_t kMaxDocumentIdBytes = 512;

struct Document {
  // User-visible id, unique within a collection.
  std::string id;
  std::string text;
  Metadata metadata;
  // Embedding; its size must equal the collection's dimension.
  std::vector<float> vector;
  // Fingerprint of the model that produced `vector` (empty when the client
  // supplied the vector itself).
  std::string model_id;
  // Stable 64-bit id assigned by Store on every write (never reused; 0 means
  // "not assigned yet" and is ignored on input). The vector index is keyed by
  // it, so an index entry for an overwritten version is detectably stale.
  uint64_t internal_id = 0;
};

}  // namespace neodb::db
