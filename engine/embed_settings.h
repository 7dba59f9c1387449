#pragma once
// The engine's typed view of a collection's settings. The store keeps the
// collection spec as short strings it does not interpret (db/collection_spec.h);
// each string <-> enum codec lives once, with the room that owns the concept:
// the metric in index/metric.h, pooling and overflow here (they are options of
// how the engine drives the encoder).

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "db/collection_spec.h"
#include "encoder/encoder.h"
#include "index/keyword/fusion.h"
#include "index/keyword/keyword_index.h"
#include "index/metric.h"

namespace neodb::engine {

// "mean" | "cls"; INVALID_ARGUMENT otherwise.
absl::StatusOr<encoder::Pooling> ParsePooling(std::string_view name);
std::string_view PoolingName(encoder::Pooling pooling);
// "error" | "chunk"; INVALID_ARGUMENT otherwise.
absl::StatusOr<encoder::Overflow> ParseOverflow(std::string_view name);
std::string_view OverflowName(encoder::Overflow overflow);

// Where a collection's vectors come from. kModel: the collection's model
// embeds every document's text. kExternal: the client sends each document's
// vector; the model id stored with them is "external:<name>" (the name given
// at creation) or, when the collection has a query model for near-text, that
// model's content hash (then the client claims its vectors are that model's).
enum class VectorSource { kModel, kExternal };
// "model" | "external"; INVALID_ARGUMENT otherwise.
absl::StatusOr<VectorSource> ParseVectorSource(std::string_view name);
std::string_view VectorSourceName(VectorSource source);

// The model id prefix of client-supplied vectors no model on the server made.
inline constexpr char kExternalModelPrefix[] = "external:";

// A collection spec with its enumerated settings parsed.
struct CollectionSettings {
  db::CollectionSpec spec;
  index::Metric metric = index::Metric::kCosine;
  encoder::Pooling pooling = encoder::Pooling::kMean;
  encoder::Overflow overflow = encoder::Overflow::kError;
  VectorSource source = VectorSource::kModel;

  // True when a model on the server can embed texts for this collection:
  // always for kModel; for kExternal only with a query model.
  bool HasModel() const;
  // The keyword index: analyzer and BM25 parameters (spec.analyzer,
  // bm25_k1, bm25_b), and the optional title field and its weight.
  keyword::KeywordOptions keyword;
  std::string title_field;
  float title_weight = 1.0f;
  // How hybrid queries that name no fusion fuse (spec.fusion, fusion_alpha).
  keyword::FusionOptions fusion;
};

// Parses and validates a stored or requested spec (the store's own checks
// plus the vocabularies above).
absl::StatusOr<CollectionSettings> ParseSettings(const db::CollectionSpec& spec);

// Encoder options for a collection's documents or queries, with `prefix`.
encoder::EmbedOptions EmbedOptionsFor(const CollectionSettings& settings,
                                      const std::string& prefix);

}  // namespace neodb::engine
