#include "engine/embed_settings.h"

#include "absl/strings/match.h"
#include <cmath>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace neodb::engine {
namespace {

// Past this a term's frequency no longer saturates at all; nobody needs more.
constexpr double kMaxBm25K1 = 100;

}  // namespace

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
  ASSIGN_OR_RETURN(s.keyword.analyzer, keyword::ParseAnalyzerKind(spec.analyzer));
  if (!std::isfinite(spec.bm25_k1) || spec.bm25_k1 < 0 || spec.bm25_k1 > kMaxBm25K1) {
    return absl::InvalidArgumentError(
        absl::StrCat("bm25_k1 is ", spec.bm25_k1, "; it must be in 0..", kMaxBm25K1));
  }
  if (!(spec.bm25_b >= 0 && spec.bm25_b <= 1)) {
    return absl::InvalidArgumentError(
        absl::StrCat("bm25_b is ", spec.bm25_b, "; it must be in 0..1"));
  }
  s.keyword.k1 = spec.bm25_k1;
  s.keyword.b = spec.bm25_b;
  if (!(spec.title_weight > 0 && spec.title_weight <= keyword::kMaxFieldWeight)) {
    return absl::InvalidArgumentError(
        absl::StrCat("title_weight is ", spec.title_weight,
                     "; it must be > 0 and <= ", keyword::kMaxFieldWeight));
  }
  s.title_field = spec.title_field;
  s.title_weight = static_cast<float>(spec.title_weight);
  ASSIGN_OR_RETURN(s.fusion.method, keyword::ParseFusionMethod(spec.fusion));
  if (!(spec.fusion_alpha >= 0 && spec.fusion_alpha <= 1)) {
    return absl::InvalidArgumentError(
        absl::StrCat("fusion alpha is ", spec.fusion_alpha, "; it must be in 0..1"));
  }
  s.fusion.alpha = spec.fusion_alpha;
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
