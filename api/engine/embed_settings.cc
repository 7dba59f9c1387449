#include "api/engine/embed_settings.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace neodb::engine {

absl::StatusOr<encoder::Pooling> ParsePooling(std::string_view name) {
  if (name == "mean") return encoder::Pooling::kMean;
  if (name == "cls") return encoder::Pooling::kCls;
  return absl::InvalidArgumentError(
      absl::StrCat("pooling '", std::string(name), "' is not one of mean, cls"));
}

std::string_view PoolingName(encoder::Pooling pooling) {
  return pooling == encoder::Pooling::kCls ? "cls" : "mean";
}

absl::StatusOr<encoder::Overflow> ParseOverflow(std::string_view name) {
  if (name == "error") return encoder::Overflow::kError;
  if (name == "chunk") return encoder::Overflow::kChunk;
  return absl::InvalidArgumentError(
      absl::StrCat("overflow '", std::string(name), "' is not one of error, chunk"));
}

std::string_view OverflowName(encoder::Overflow overflow) {
  return overflow == encoder::Overflow::kChunk ? "chunk" : "error";
}

absl::StatusOr<VectorSource> ParseVectorSource(std::string_view name) {
  if (name == "model") return VectorSource::kModel;
  if (name == "external") return VectorSource::kExternal;
  return absl::InvalidArgumentError(
      absl::StrCat("vector source '", std::string(name), "' is not one of model, external"));
}

std::string_view VectorSourceName(VectorSource source) {
  return source == VectorSource::kExternal ? "external" : "model";
}

bool CollectionSettings::HasModel() const {
  return source == VectorSource::kModel || !absl::StartsWith(spec.model_id, kExternalModelPrefix);
}

absl::StatusOr<CollectionSettings> ParseSettings(const db::CollectionSpec& spec) {
  RETURN_IF_ERROR(db::ValidateCollectionSpec(spec));
  CollectionSettings s;
  s.spec = spec;
  ASSIGN_OR_RETURN(s.metric, index::ParseMetric(spec.metric));
  ASSIGN_OR_RETURN(s.pooling, ParsePooling(spec.pooling));
  ASSIGN_OR_RETURN(s.overflow, ParseOverflow(spec.overflow));
  ASSIGN_OR_RETURN(s.source, ParseVectorSource(spec.vector_source));
  if (s.source == VectorSource::kModel && absl::StartsWith(spec.model_id, kExternalModelPrefix)) {
    return absl::InvalidArgumentError(absl::StrCat("collection '", spec.name,
                                                   "' embeds with its model, but its model id '",
                                                   spec.model_id, "' names external vectors"));
  }
  return s;
}

encoder::EmbedOptions EmbedOptionsFor(const CollectionSettings& settings,
                                      const std::string& prefix) {
  encoder::EmbedOptions o;
  o.pooling = settings.pooling;
  // Cosine indexes normalise on add and query themselves.
  o.normalize = false;
  o.overflow = settings.overflow;
  o.prefix = prefix;
  return o;
}

}  // namespace neodb::engine
