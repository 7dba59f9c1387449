#pragma once
// Conversions between neodb.v1 messages and the engine's types. Every
// conversion from a message validates it (hostile input): errors are
// INVALID_ARGUMENT naming the field.

#include <string>

#include "absl/status/statusor.h"
#include "engine/database.h"
#include "engine/search_params.h"
#include "index/keyword/fusion.h"
#include "db/collection_spec.h"
#include "db/filter.h"
#include "db/metadata.h"
#include "encoder/encoder.h"
#include "index/metric.h"
#include "neodb/v1/neodb.pb.h"

namespace neodb::api {

absl::StatusOr<db::Value> FromProto(const v1::Value& v, const std::string& where);
v1::Value ToProto(const db::Value& v);
absl::StatusOr<db::Metadata> FromProto(const google::protobuf::Map<std::string, v1::Value>& m,
                                       const std::string& where);
void ToProto(const db::Metadata& m, google::protobuf::Map<std::string, v1::Value>* out);

// A filter message with no kind set means "no filter" (returns nullopt
// through *present = false).
absl::StatusOr<db::Filter> FromProto(const v1::Filter& f, bool* present);

// A request's filter, given as a message or in its JSON form
// (db::ParseFilterJson): nullopt when neither is set; INVALID_ARGUMENT when
// both are. The one place a filter is read from the wire.
absl::StatusOr<std::optional<db::Filter>> RequestFilter(const v1::Filter& f,
                                                        const std::string& json);

// The metadata change an UpdateMetadata request asks for (checked by
// engine::ValidatePatch where the engine takes it).
absl::StatusOr<engine::MetadataPatch> PatchFromProto(const v1::UpdateMetadataRequest& req);

// The settings' enums as the API spells them (the names are the engine's and
// the index's: index::ParseMetric, engine::ParsePooling / ParseOverflow).
v1::Metric ToProto(index::Metric metric);
v1::Pooling ToProto(encoder::Pooling pooling);
v1::Overflow ToProto(encoder::Overflow overflow);

// Maps the collection settings; dimension and model id are filled in by the
// database.
absl::StatusOr<db::CollectionSpec> FromProto(const v1::CollectionSpec& s);

// A fusion named by a request (NearText, a collection spec, SetFusion):
// `name` ("" = adaptive unless an alpha is given) and an optional alpha. An
// alpha alone asks for the weighted fusion it is the weight of; with another
// method it is INVALID_ARGUMENT. The range of alpha is checked where the
// engine takes it.
absl::StatusOr<keyword::FusionOptions> FusionFromProto(const std::string& name, bool has_alpha,
                                                       double alpha);
void ToProto(const engine::CollectionInfo& info, v1::CollectionInfo* out);
void ToProto(const db::Document& d, bool include_text, bool include_metadata, v1::Document* out);
// As above; the stored vector too when `include_vector`.
void ToProto(const db::Document& d, bool include_text, bool include_metadata, bool include_vector,
             v1::Document* out);
// The vector-source part of a collection spec (fields 20..23).
absl::StatusOr<engine::VectorOptions> VectorOptionsFromProto(const v1::CollectionSpec& s);

// The search parameters of a NearText or NearVector request (the filter from
// its message or from its JSON form, db::ParseFilterJson): the one place they
// are read from the wire. The engine range-checks them on entry
// (engine::SearchParams::Validate).
absl::StatusOr<engine::SearchParams> SearchParamsFromProto(const v1::NearTextRequest& req);
absl::StatusOr<engine::SearchParams> SearchParamsFromProto(const v1::NearVectorRequest& req);
absl::StatusOr<engine::SearchParams> SearchParamsFromProto(const v1::RecommendRequest& req);
// The examples of a Recommend request; engine::ValidateRecommend checks them.
engine::RecommendQuery RecommendFromProto(const v1::RecommendRequest& req);

// IndexSpec message → factory string ("Flat", "HNSW32", "IVF1024,PQ16").
absl::StatusOr<std::string> IndexSpecString(const v1::IndexSpec& spec);

}  // namespace neodb::api
