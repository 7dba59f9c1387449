#pragma once
// The collection's document vectors under one model, kept on disk between
// `neodb adapt`'s mining (step 2, which embeds the whole collection when it
// mines in process) and its evaluation of the same model (step 4), so that the
// collection is embedded once, the vectors do not stay in memory through the
// fine-tune (about 1.5 GB per million 384-dim documents), and a run resumed
// after a crash still finds them.
//
// File: the line "neodb-doc-vectors 1", one line of JSON (the key), then
// documents × dim little-endian float32. A file whose key differs from the
// caller's (another model, other documents, other embedding settings) is
// stale, not an error: the caller embeds again.

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "adapt/adapt_pairs.h"
#include "adapt/collection_eval.h"
#include "common/env.h"

namespace neodb::adapt {

// What the vectors were computed from; two keys are the same cache entry only
// when every field is equal.
struct VectorCacheKey {
  std::string model_id;        // the collection's model (content hash)
  int64_t documents = 0;       // rows
  int64_t dim = 0;             // columns
  std::string documents_hash;  // DocumentsHash of the collection's ids and texts
  std::string settings;        // SettingsFingerprint of the embedding settings
};

// XXH3 over every document's id and text, in order (lengths included, so no
// two lists hash alike by concatenation), as 16 hex digits.
std::string DocumentsHash(const CollectionDocs& docs);

// What of `settings` changes a document's vector: pooling, overflow, prefix,
// precision, and the metric (normalised under cosine only).
std::string SettingsFingerprint(const EmbedSettings& settings);

// Writes `vectors` (REQUIRES: size == key.documents * key.dim) to `path`
// with WriteFileAtomically, so a crash leaves the old file or none, never a
// torn one, and a failed write leaves no temporary file.
absl::Status SaveDocVectors(const std::filesystem::path& path, const std::vector<float>& vectors,
                            const VectorCacheKey& key);

// The vectors in `path` when it holds exactly `key`'s; otherwise nullopt, with
// the reason in `*why_not`: no file, one for another key, or one that cannot
// be read, is malformed, truncated or holds a non-finite value. Never an
// error: the file is only a saving, and the caller embeds instead. Read
// through env.
std::optional<std::vector<float>> LoadDocVectors(const std::filesystem::path& path,
                                                 const VectorCacheKey& key, std::string* why_not,
                                                 Env* env = Env::Default());

}  // namespace neodb::adapt
