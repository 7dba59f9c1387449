#pragma once
// Settings of one collection, persisted in the store next to its documents.

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"

namespace neodb::db {

struct CollectionSpec {
  // 1..128 characters of [A-Za-z0-9_-].
  std::string name;
  // Vector dimension; 1..65536.
  uint32_t dimension = 0;
  // FAISS-style factory string: "Flat", "HNSW32", "IVF256,PQ16". The store
  // only checks it is non-empty and printable; index::MakeIndex validates it.
  std::string index_spec = "Flat";
  // Names the index and the encoder define (index::MetricName,
  // engine::PoolingName); the store does not interpret them.
  std::string metric = "cosine";
  std::string pooling = "mean";
  // Prefixes prepended to query / document text before embedding (may be empty).
  std::string query_instruction;
  std::string document_instruction;
  // What to do with text longer than the model's context
  // (engine::OverflowName); not interpreted by the store.
  std::string overflow = "error";
  // The model whose vectors this collection holds (empty: client-supplied vectors).
  std::string model_id;
  // Where that model's checkpoint lives (opaque to the store; empty when the
  // collection predates per-collection models and uses the server's default).
  std::string model_dir;
  // The model_dir the collection had before its last reindex onto another
  // model (empty: none yet). The server lets a client reindex the collection
  // back onto it wherever it lies (api/auth/model_paths.h): `neodb adapt
  // --rollback`. Records written before it existed decode with it empty.
  std::string previous_model_dir;
  // The keyword index's settings (engine/keyword_part.h parses them; the store
  // checks only that the strings are short and printable). Records written
  // before these existed decode with these defaults.
  std::string analyzer = "english";  // english | simple | none
  double bm25_k1 = 0.9;
  double bm25_b = 0.4;
  // A metadata field also indexed for keyword search, as a field of weight
  // title_weight (BM25F); empty: none.
  std::string title_field;
  double title_weight = 1.0;
  // The encoder precision the collection's vectors were computed in
  // (encoder::PrecisionName: "f32", "bf16", "int8"; opaque to the store).
  // Records written before it existed decode as "f32".
  std::string precision = "f32";
  // How hybrid near-text queries that name no fusion fuse their legs
  // (keyword::ParseFusionMethod's names: "adaptive", "weighted", "rrf";
  // opaque to the store) and, for "weighted", the vector leg's share in
  // [0, 1]. Set at creation or later (`neodb adapt --apply` sets the fusion
  // it calibrated on the user's held-out pairs). Records written before these
  // existed decode as "adaptive" / 0.5. Empty in a creation request: the
  // model's (its neodb_model.json), else "adaptive"; never stored empty.
  std::string fusion = "adaptive";
  double fusion_alpha = 0.5;
  // Bytes the engine keeps with the collection and the store never reads
  // (e.g. a reindex's commit marker). At most 4096 bytes.
  std::string engine_state;
  // Where the vectors come from: "model" (the collection's model embeds each
  // text) or "external" (the client supplies them). Named by the engine
  // (engine::VectorSourceName); the store keeps the printable string.
  std::string vector_source = "model";
  // Each document belongs to one tenant, and every call names the tenant it
  // acts for (engine/tenant_scope.h). Fixed at creation. Records written
  // before it existed decode as false.
  bool multi_tenant = false;
  // Unix time in microseconds; set by Store::CreateCollection when 0.
  int64_t created_at_micros = 0;
};

inline constexpr size_t kMaxCollectionNameBytes = 128;
inline constexpr uint32_t kMaxDimension = 65536;

// OK when `name` is 1..128 characters of [A-Za-z0-9_-]; INVALID_ARGUMENT otherwise.
absl::Status ValidateCollectionName(std::string_view name);

// Validates what the store relies on (name, dimension range, printable bounded
// strings, instruction lengths); INVALID_ARGUMENT naming the first bad field.
// The vocabularies of metric, pooling and overflow are the engine's to check.
absl::Status ValidateCollectionSpec(const CollectionSpec& spec);

}  // namespace neodb::db
