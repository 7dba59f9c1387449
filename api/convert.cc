#include "api/convert.h"

#include <cmath>
#include <memory>
#include <type_traits>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "engine/embed_settings.h"
#include "index/keyword/fusion.h"
#include "index/metric.h"

namespace neodb::api {

namespace {

// Depth: list and object values nest (ValidateMetadata caps objects at
// db::kMaxMetadataDepth); refuse far deeper input before recursing further.
absl::StatusOr<db::Value> ValueFromProto(const v1::Value& v, const std::string& where,
                                         int depth) {
  if (depth > db::kMaxMetadataDepth + 1) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": nested deeper than ", db::kMaxMetadataDepth, " levels"));
  }
  switch (v.kind_case()) {
    case v1::Value::kStringValue:
      return db::Value(v.string_value());
    case v1::Value::kIntValue:
      return db::Value(static_cast<int64_t>(v.int_value()));
    case v1::Value::kDoubleValue:
      if (!std::isfinite(v.double_value())) {
        return absl::InvalidArgumentError(absl::StrCat(where, ": double is not finite"));
      }
      return db::Value(v.double_value());
    case v1::Value::kBoolValue:
      return db::Value(v.bool_value());
    case v1::Value::kListValue: {
      db::Array a;
      for (int i = 0; i < v.list_value().values_size(); ++i) {
        const std::string at = absl::StrCat(where, "[", i, "]");
        if (i >= static_cast<int>(db::kMaxMetadataArrayItems)) {
          return absl::InvalidArgumentError(absl::StrCat(
              where, ": list of more than ", db::kMaxMetadataArrayItems, " values"));
        }
        ASSIGN_OR_RETURN(db::Value item, ValueFromProto(v.list_value().values(i), at, depth + 1));
        if (!db::IsScalar(item)) {
          return absl::InvalidArgumentError(absl::StrCat(
              at, ": a list holds strings, numbers and bools, not ",
              std::string(db::ValueTypeName(item))));
        }
        a.items.push_back(std::move(item));
      }
      return db::Value(std::move(a));
    }
    case v1::Value::kObjectValue: {
      db::Object o;
      for (const auto& [k, field] : v.object_value().fields()) {
        ASSIGN_OR_RETURN(db::Value value,
                         ValueFromProto(field, absl::StrCat(where, ".", k), depth + 1));
        o.fields.emplace(k, std::move(value));
      }
      return db::Value(std::move(o));
    }
    case v1::Value::kDatetimeMicros: {
      const int64_t t = v.datetime_micros();
      if (t < db::kMinDateTimeMicros || t > db::kMaxDateTimeMicros) {
        return absl::InvalidArgumentError(
            absl::StrCat(where, ": datetime outside years 0001..9999"));
      }
      return db::Value(db::DateTime{t});
    }
    case v1::Value::kGeoValue: {
      const db::GeoPoint p{v.geo_value().lat(), v.geo_value().lon()};
      if (!(p.lat >= -90 && p.lat <= 90) || !(p.lon >= -180 && p.lon <= 180)) {
        return absl::InvalidArgumentError(
            absl::StrCat(where, ": geo point needs lat in [-90, 90] and lon in [-180, 180]"));
      }
      return db::Value(p);
    }
    case v1::Value::KIND_NOT_SET:
      break;
  }
  return absl::InvalidArgumentError(absl::StrCat(where, ": value has no type set"));
}

}  // namespace

absl::StatusOr<db::Value> FromProto(const v1::Value& v, const std::string& where) {
  return ValueFromProto(v, where, 0);
}

v1::Value ToProto(const db::Value& v) {
  v1::Value out;
  if (auto* s = std::get_if<std::string>(&v)) {
    out.set_string_value(*s);
  } else if (auto* i = std::get_if<int64_t>(&v)) {
    out.set_int_value(*i);
  } else if (auto* d = std::get_if<double>(&v)) {
    out.set_double_value(*d);
  } else if (auto* b = std::get_if<bool>(&v)) {
    out.set_bool_value(*b);
  } else if (auto* a = std::get_if<db::Array>(&v)) {
    auto* list = out.mutable_list_value();
    for (const db::Value& item : a->items) *list->add_values() = ToProto(item);
  } else if (auto* o = std::get_if<db::Object>(&v)) {
    auto* fields = out.mutable_object_value()->mutable_fields();
    for (const auto& [k, field] : o->fields) (*fields)[k] = ToProto(field);
  } else if (auto* t = std::get_if<db::DateTime>(&v)) {
    out.set_datetime_micros(t->micros);
  } else if (auto* g = std::get_if<db::GeoPoint>(&v)) {
    out.mutable_geo_value()->set_lat(g->lat);
    out.mutable_geo_value()->set_lon(g->lon);
  }
  return out;
}

absl::StatusOr<db::Metadata> FromProto(const google::protobuf::Map<std::string, v1::Value>& m,
                                       const std::string& where) {
  db::Metadata out;
  for (const auto& [k, v] : m) {
    ASSIGN_OR_RETURN(db::Value value, FromProto(v, absl::StrCat(where, " metadata '", k, "'")));
    out.emplace(k, std::move(value));
  }
  return out;
}

void ToProto(const db::Metadata& m, google::protobuf::Map<std::string, v1::Value>* out) {
  for (const auto& [k, v] : m) (*out)[k] = ToProto(v);
}

namespace {

absl::StatusOr<db::Filter> FilterFromProto(const v1::Filter& f, const std::string& path,
                                           int depth) {
  if (depth > db::kMaxFilterDepth) {
    return absl::InvalidArgumentError(
        absl::StrCat("filter at ", path, ": nested deeper than ", db::kMaxFilterDepth));
  }
  auto field_of = [&](const std::string& field) -> absl::Status {
    if (field.empty()) {
      return absl::InvalidArgumentError(absl::StrCat("filter at ", path, ": field is empty"));
    }
    return absl::OkStatus();
  };
  switch (f.kind_case()) {
    case v1::Filter::kAll:
    case v1::Filter::kAny: {
      const auto& list = f.kind_case() == v1::Filter::kAll ? f.all() : f.any();
      const char* name = f.kind_case() == v1::Filter::kAll ? "all" : "any";
      if (list.filters().empty()) {
        return absl::InvalidArgumentError(
            absl::StrCat("filter at ", path, ": '", name, "' has no children"));
      }
      std::vector<db::Filter> children;
      for (int i = 0; i < list.filters_size(); ++i) {
        ASSIGN_OR_RETURN(db::Filter child,
                         FilterFromProto(list.filters(i),
                                         absl::StrCat(path, ".", name, "[", i, "]"), depth + 1));
        children.push_back(std::move(child));
      }
      return f.kind_case() == v1::Filter::kAll ? db::Filter::And(std::move(children))
                                               : db::Filter::Or(std::move(children));
    }
    case v1::Filter::kNegate: {
      ASSIGN_OR_RETURN(db::Filter child,
                       FilterFromProto(f.negate(), absl::StrCat(path, ".negate"), depth + 1));
      return db::Filter::Not(std::move(child));
    }
    case v1::Filter::kEq: {
      RETURN_IF_ERROR(field_of(f.eq().field()));
      ASSIGN_OR_RETURN(db::Value v,
                       FromProto(f.eq().value(), absl::StrCat("filter at ", path, ".eq")));
      return db::Filter::Eq(f.eq().field(), std::move(v));
    }
    case v1::Filter::kRange: {
      const auto& r = f.range();
      RETURN_IF_ERROR(field_of(r.field()));
      std::vector<db::Filter> parts;
      if (r.has_lower()) {
        ASSIGN_OR_RETURN(db::Value v,
                         FromProto(r.lower(), absl::StrCat("filter at ", path, ".range.lower")));
        parts.push_back(r.lower_exclusive() ? db::Filter::Gt(r.field(), std::move(v))
                                            : db::Filter::Ge(r.field(), std::move(v)));
      }
      if (r.has_upper()) {
        ASSIGN_OR_RETURN(db::Value v,
                         FromProto(r.upper(), absl::StrCat("filter at ", path, ".range.upper")));
        parts.push_back(r.upper_exclusive() ? db::Filter::Lt(r.field(), std::move(v))
                                            : db::Filter::Le(r.field(), std::move(v)));
      }
      if (parts.empty()) {
        return absl::InvalidArgumentError(
            absl::StrCat("filter at ", path, ": range on '", r.field(), "' has no bound"));
      }
      if (parts.size() == 1) return std::move(parts[0]);
      return db::Filter::And(std::move(parts));
    }
    case v1::Filter::kInList: {
      RETURN_IF_ERROR(field_of(f.in_list().field()));
      std::vector<db::Value> values;
      for (int i = 0; i < f.in_list().values_size(); ++i) {
        ASSIGN_OR_RETURN(db::Value v,
                         FromProto(f.in_list().values(i),
                                   absl::StrCat("filter at ", path, ".in_list[", i, "]")));
        values.push_back(std::move(v));
      }
      return db::Filter::In(f.in_list().field(), std::move(values));
    }
    case v1::Filter::kExists: {
      RETURN_IF_ERROR(field_of(f.exists().field()));
      return db::Filter::Exists(f.exists().field());
    }
    case v1::Filter::kContainsAny:
    case v1::Filter::kContainsAll: {
      const bool any = f.kind_case() == v1::Filter::kContainsAny;
      const auto& c = any ? f.contains_any() : f.contains_all();
      const char* name = any ? "contains_any" : "contains_all";
      RETURN_IF_ERROR(field_of(c.field()));
      if (c.values_size() > static_cast<int>(db::kMaxFilterInValues)) {
        return absl::InvalidArgumentError(absl::StrCat("filter at ", path, ".", name,
                                                       ": more than ", db::kMaxFilterInValues,
                                                       " values"));
      }
      std::vector<db::Value> values;
      for (int i = 0; i < c.values_size(); ++i) {
        ASSIGN_OR_RETURN(db::Value v,
                         FromProto(c.values(i), absl::StrCat("filter at ", path, ".", name, "[",
                                                             i, "]")));
        values.push_back(std::move(v));
      }
      return any ? db::Filter::ContainsAny(c.field(), std::move(values))
                 : db::Filter::ContainsAll(c.field(), std::move(values));
    }
    case v1::Filter::kGeoRadius: {
      const auto& g = f.geo_radius();
      RETURN_IF_ERROR(field_of(g.field()));
      if (!g.has_center()) {
        return absl::InvalidArgumentError(
            absl::StrCat("filter at ", path, ".geo_radius.center: not set"));
      }
      return db::Filter::GeoRadius(g.field(), {g.center().lat(), g.center().lon()}, g.meters());
    }
    case v1::Filter::kGeoBbox: {
      const auto& g = f.geo_bbox();
      RETURN_IF_ERROR(field_of(g.field()));
      if (!g.has_top_left() || !g.has_bottom_right()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "filter at ", path, ".geo_bbox: needs top_left and bottom_right"));
      }
      return db::Filter::GeoBox(g.field(), {g.top_left().lat(), g.top_left().lon()},
                                {g.bottom_right().lat(), g.bottom_right().lon()});
    }
    case v1::Filter::KIND_NOT_SET:
      break;
  }
  return absl::InvalidArgumentError(absl::StrCat("filter at ", path, ": no condition set"));
}

}  // namespace

absl::StatusOr<db::Filter> FromProto(const v1::Filter& f, bool* present) {
  *present = f.kind_case() != v1::Filter::KIND_NOT_SET;
  if (!*present) return db::Filter::And({});
  ASSIGN_OR_RETURN(db::Filter out, FilterFromProto(f, "filter", 0));
  if (absl::Status s = out.Validate(); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("malformed filter: ", s.message()));
  }
  return out;
}

absl::StatusOr<keyword::FusionOptions> FusionFromProto(const std::string& name, bool has_alpha,
                                                       double alpha) {
  keyword::FusionOptions f;
  if (!name.empty()) {
    ASSIGN_OR_RETURN(f.method, keyword::ParseFusionMethod(name));
  }
  if (has_alpha) {
    if (name.empty()) f.method = keyword::FusionMethod::kWeighted;
    if (f.method != keyword::FusionMethod::kWeighted) {
      return absl::InvalidArgumentError(
          absl::StrCat("alpha applies to fusion weighted, not ", name));
    }
    f.alpha = alpha;
  }
  return f;
}

namespace {

// Another node's statistics: checked as hostile (the index also keeps
// every df within [its own count, documents]).
absl::StatusOr<std::shared_ptr<const keyword::CorpusStats>> CorpusFromProto(
    const v1::KeywordCorpus& c) {
  if (!(std::isfinite(c.total_length()) && c.total_length() >= 0)) {
    return absl::InvalidArgumentError("keyword_corpus.total_length must be finite and >= 0");
  }
  if (c.document_frequency_size() > 4096) {
    return absl::InvalidArgumentError("keyword_corpus names more than 4096 terms");
  }
  auto out = std::make_shared<keyword::CorpusStats>();
  out->documents = c.documents();
  out->total_length = c.total_length();
  for (const auto& [term, df] : c.document_frequency()) {
    if (df > c.documents()) {
      return absl::InvalidArgumentError(absl::StrCat("keyword_corpus: term '", term, "' is in ", df,
                                                     " of ", c.documents(), " documents"));
    }
    out->document_frequency[term] = df;
  }
  return out;
}

}  // namespace

absl::StatusOr<std::optional<db::Filter>> RequestFilter(const v1::Filter& f,
                                                        const std::string& json) {
  bool has_filter = false;
  ASSIGN_OR_RETURN(db::Filter filter, FromProto(f, &has_filter));
  if (!json.empty()) {
    if (has_filter) return absl::InvalidArgumentError("set filter or filter_json, not both");
    return db::ParseFilterJson(json);
  }
  if (has_filter) return filter;
  return std::nullopt;
}

absl::StatusOr<engine::MetadataPatch> PatchFromProto(const v1::UpdateMetadataRequest& req) {
  engine::MetadataPatch patch;
  patch.mode = req.mode() == v1::UpdateMetadataRequest::REPLACE
                   ? engine::MetadataPatch::Mode::kReplace
                   : engine::MetadataPatch::Mode::kMerge;
  ASSIGN_OR_RETURN(patch.metadata, FromProto(req.metadata(), "metadata"));
  patch.remove.assign(req.remove().begin(), req.remove().end());
  return patch;
}

namespace {

template <typename Request>
absl::StatusOr<engine::SearchParams> SearchParamsOf(const Request& req) {
  engine::SearchParams p;
  p.k = req.k() == 0 ? 10 : req.k();
  ASSIGN_OR_RETURN(p.filter, RequestFilter(req.filter(), req.filter_json()));
  p.index.ef_search = req.ef_search();
  p.index.nprobe = req.nprobe();
  p.include_text = req.include_text();
  p.include_metadata = req.include_metadata();
  p.include_vector = req.include_vector();
  p.tenant = req.tenant();
  if constexpr (std::is_same_v<Request, v1::NearTextRequest>) {
    if (!req.mode().empty()) {
      ASSIGN_OR_RETURN(p.mode, engine::ParseSearchMode(req.mode()));
    }
    // Neither fusion nor alpha: the collection's default fusion (the engine's).
    if (!req.fusion().empty() || req.has_alpha()) {
      ASSIGN_OR_RETURN(p.fusion, FusionFromProto(req.fusion(), req.has_alpha(), req.alpha()));
    }
    p.explain = req.explain();
    if (req.has_keyword_corpus()) {
      ASSIGN_OR_RETURN(p.keyword_corpus, CorpusFromProto(req.keyword_corpus()));
    }
  } else {
    p.mode = engine::SearchMode::kVector;
  }
  if (req.has_score_threshold()) p.score_threshold = req.score_threshold();
  p.offset = req.offset();
  if (req.has_group_by()) {
    p.group_by = engine::GroupBy{req.group_by().field(), req.group_by().groups(),
                                 req.group_by().group_size()};
  }
  // Range checks happen once, where the engine takes the value
  // (SearchParams::Validate at NearText/NearVector).
  return p;
}

}  // namespace

absl::StatusOr<engine::SearchParams> SearchParamsFromProto(const v1::NearTextRequest& req) {
  return SearchParamsOf(req);
}

absl::StatusOr<engine::SearchParams> SearchParamsFromProto(const v1::NearVectorRequest& req) {
  return SearchParamsOf(req);
}

absl::StatusOr<engine::SearchParams> SearchParamsFromProto(const v1::RecommendRequest& req) {
  return SearchParamsOf(req);
}

engine::RecommendQuery RecommendFromProto(const v1::RecommendRequest& req) {
  engine::RecommendQuery q;
  q.positive_ids.assign(req.positive_ids().begin(), req.positive_ids().end());
  q.negative_ids.assign(req.negative_ids().begin(), req.negative_ids().end());
  for (const v1::FloatVector& v : req.positive_vectors()) {
    q.positive_vectors.emplace_back(v.values().begin(), v.values().end());
  }
  for (const v1::FloatVector& v : req.negative_vectors()) {
    q.negative_vectors.emplace_back(v.values().begin(), v.values().end());
  }
  if (req.has_negative_weight()) q.negative_weight = req.negative_weight();
  return q;
}

absl::StatusOr<std::string> IndexSpecString(const v1::IndexSpec& spec) {
  // 0 means "the default"; a negative number is a client error, not a
  // request for the default (it used to become one silently).
  const std::pair<const char*, int32_t> tunables[] = {
      {"hnsw_m", spec.hnsw_m()},
      {"hnsw_ef_construction", spec.hnsw_ef_construction()},
      {"hnsw_ef_search", spec.hnsw_ef_search()},
      {"ivf_nlist", spec.ivf_nlist()},
      {"pq_m", spec.pq_m()},
      {"ivf_nprobe", spec.ivf_nprobe()}};
  for (const auto& [name, value] : tunables) {
    if (value < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("index.", name, " is ", value, "; it must be positive (0: the default)"));
    }
  }
  std::string type = absl::AsciiStrToLower(spec.type());
  // Tunables become part of the factory string (index/index_factory.h), so
  // they persist with the collection; the factory validates their ranges.
  if (type == "hnsw") {
    std::string s = absl::StrCat("HNSW", spec.hnsw_m() > 0 ? spec.hnsw_m() : 32);
    if (spec.hnsw_ef_construction() > 0) {
      absl::StrAppend(&s, ",efConstruction=", spec.hnsw_ef_construction());
    }
    if (spec.hnsw_ef_search() > 0) absl::StrAppend(&s, ",efSearch=", spec.hnsw_ef_search());
    return s;
  }
  if (type == "ivfpq" || type == "ivf-pq" || type == "ivf_pq") {
    std::string s = absl::StrCat("IVF", spec.ivf_nlist() > 0 ? spec.ivf_nlist() : 1024, ",PQ",
                                 spec.pq_m() > 0 ? spec.pq_m() : 16);
    if (spec.ivf_nprobe() > 0) absl::StrAppend(&s, ",nprobe=", spec.ivf_nprobe());
    return s;
  }
  if (type.empty() || type == "flat") return std::string("Flat");
  // A factory string ("HNSW16", "IVF256,PQ8") is accepted as is; the index
  // factory validates it.
  if (absl::StartsWith(spec.type(), "HNSW") || absl::StartsWith(spec.type(), "IVF") ||
      spec.type() == "Flat") {
    return spec.type();
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "index type '", spec.type(), "' is unknown (use flat, hnsw, ivfpq or a factory string)"));
}

absl::StatusOr<db::CollectionSpec> FromProto(const v1::CollectionSpec& s) {
  db::CollectionSpec out;
  out.name = s.name();
  RETURN_IF_ERROR(db::ValidateCollectionName(out.name));
  ASSIGN_OR_RETURN(out.index_spec, IndexSpecString(s.index()));
  index::Metric metric;
  switch (s.metric()) {
    case v1::METRIC_UNSPECIFIED:
    case v1::METRIC_COSINE:
      metric = index::Metric::kCosine;
      break;
    case v1::METRIC_INNER_PRODUCT:
      metric = index::Metric::kInnerProduct;
      break;
    case v1::METRIC_L2:
      metric = index::Metric::kL2;
      break;
    default:
      return absl::InvalidArgumentError(absl::StrCat("unknown metric ", s.metric()));
  }
  out.metric = std::string(index::MetricName(metric));
  // Unspecified pooling stays empty: the engine takes the model's own.
  switch (s.pooling()) {
    case v1::POOLING_UNSPECIFIED:
      out.pooling.clear();
      break;
    case v1::POOLING_MEAN:
      out.pooling = std::string(engine::PoolingName(encoder::Pooling::kMean));
      break;
    case v1::POOLING_CLS:
      out.pooling = std::string(engine::PoolingName(encoder::Pooling::kCls));
      break;
    default:
      return absl::InvalidArgumentError(absl::StrCat("unknown pooling ", s.pooling()));
  }
  encoder::Overflow overflow;
  switch (s.overflow()) {
    case v1::OVERFLOW_UNSPECIFIED:
    case v1::OVERFLOW_ERROR:
      overflow = encoder::Overflow::kError;
      break;
    case v1::OVERFLOW_CHUNK:
      overflow = encoder::Overflow::kChunk;
      break;
    default:
      return absl::InvalidArgumentError(absl::StrCat("unknown overflow ", s.overflow()));
  }
  out.overflow = std::string(engine::OverflowName(overflow));
  out.query_instruction = s.query_prefix();
  out.document_instruction = s.document_prefix();
  // The keyword settings are the engine's to range-check (engine::ParseSettings).
  if (!s.analyzer().empty()) out.analyzer = s.analyzer();
  if (s.has_bm25_k1()) out.bm25_k1 = s.bm25_k1();
  if (s.has_bm25_b()) out.bm25_b = s.bm25_b();
  out.title_field = s.title_field();
  if (s.has_title_weight()) out.title_weight = s.title_weight();
  // Empty: the server's default precision (Database::CreateCollection).
  out.precision = s.precision();
  if (!out.precision.empty()) RETURN_IF_ERROR(encoder::ParsePrecision(out.precision).status());
  // Neither: the model's fusion, else adaptive (Database::CreateCollection).
  out.multi_tenant = s.multi_tenant();
  out.fusion.clear();
  if (!s.fusion().empty() || s.has_fusion_alpha()) {
    ASSIGN_OR_RETURN(keyword::FusionOptions f,
                     FusionFromProto(s.fusion(), s.has_fusion_alpha(), s.fusion_alpha()));
    out.fusion = std::string(keyword::FusionMethodName(f.method));
    out.fusion_alpha = f.alpha;
  }
  return out;
}

v1::Metric ToProto(index::Metric metric) {
  switch (metric) {
    case index::Metric::kInnerProduct:
      return v1::METRIC_INNER_PRODUCT;
    case index::Metric::kL2:
      return v1::METRIC_L2;
    case index::Metric::kCosine:
      break;
  }
  return v1::METRIC_COSINE;
}

v1::Pooling ToProto(encoder::Pooling pooling) {
  return pooling == encoder::Pooling::kCls ? v1::POOLING_CLS : v1::POOLING_MEAN;
}

v1::Overflow ToProto(encoder::Overflow overflow) {
  return overflow == encoder::Overflow::kChunk ? v1::OVERFLOW_CHUNK : v1::OVERFLOW_ERROR;
}

void ToProto(const engine::CollectionInfo& info, v1::CollectionInfo* out) {
  auto* s = out->mutable_spec();
  s->set_name(info.spec.name);
  s->mutable_index()->set_type(info.index_spec);
  // The engine validated these when the collection was created or loaded.
  s->set_metric(ToProto(index::ParseMetric(info.spec.metric).value_or(index::Metric::kCosine)));
  s->set_pooling(
      ToProto(engine::ParsePooling(info.spec.pooling).value_or(encoder::Pooling::kMean)));
  s->set_overflow(
      ToProto(engine::ParseOverflow(info.spec.overflow).value_or(encoder::Overflow::kError)));
  s->set_query_prefix(info.spec.query_instruction);
  s->set_document_prefix(info.spec.document_instruction);
  const bool external =
      info.spec.vector_source == engine::VectorSourceName(engine::VectorSource::kExternal);
  s->set_vectors(external ? v1::VECTOR_SOURCE_EXTERNAL : v1::VECTOR_SOURCE_MODEL);
  if (external) {
    s->set_dimension(static_cast<int32_t>(info.spec.dimension));
    if (absl::StartsWith(info.spec.model_id, engine::kExternalModelPrefix)) {
      s->set_vectors_name(
          info.spec.model_id.substr(std::string_view(engine::kExternalModelPrefix).size()));
    } else {
      s->set_vectors_name(info.spec.model_id);
      s->set_query_model(info.spec.model_dir.empty() ? "default" : info.spec.model_dir);
    }
  }
  s->set_analyzer(info.spec.analyzer);
  s->set_bm25_k1(info.spec.bm25_k1);
  s->set_bm25_b(info.spec.bm25_b);
  s->set_title_field(info.spec.title_field);
  s->set_title_weight(info.spec.title_weight);
  auto* k = out->mutable_keyword();
  k->set_documents(info.keyword.documents);
  k->set_terms(info.keyword.terms);
  k->set_postings(info.keyword.postings);
  k->set_memory_bytes(info.keyword.memory_bytes);
  k->set_snapshot_bytes(info.keyword.snapshot_bytes);
  s->set_precision(info.spec.precision);
  s->set_multi_tenant(info.spec.multi_tenant);
  s->set_fusion(info.spec.fusion);
  // The alpha only where it means something, so that a described spec is a
  // valid spec to create with (an alpha beside "adaptive" is refused there).
  if (keyword::ParseFusionMethod(info.spec.fusion).value_or(keyword::FusionMethod::kAdaptive) ==
      keyword::FusionMethod::kWeighted) {
    s->set_fusion_alpha(info.spec.fusion_alpha);
  }
  out->set_count(info.count);
  out->set_dimension(static_cast<int32_t>(info.spec.dimension));
  out->set_model_id(info.spec.model_id);
  out->set_model_dir(info.spec.model_dir);
  out->set_index_type(info.index_spec);
  out->set_index_size(info.index_size);
}

void ToProto(const db::Document& d, bool include_text, bool include_metadata, v1::Document* out) {
  ToProto(d, include_text, include_metadata, false, out);
}

void ToProto(const db::Document& d, bool include_text, bool include_metadata, bool include_vector,
             v1::Document* out) {
  out->set_id(d.id);
  if (include_text) out->set_text(d.text);
  if (include_metadata) ToProto(d.metadata, out->mutable_metadata());
  if (include_vector) {
    out->mutable_vector()->Add(d.vector.begin(), d.vector.end());
    out->set_vector_model_id(d.model_id);
  }
}

absl::StatusOr<engine::VectorOptions> VectorOptionsFromProto(const v1::CollectionSpec& s) {
  engine::VectorOptions o;
  switch (s.vectors()) {
    case v1::VECTOR_SOURCE_UNSPECIFIED:
    case v1::VECTOR_SOURCE_MODEL:
      o.source = engine::VectorSource::kModel;
      break;
    case v1::VECTOR_SOURCE_EXTERNAL:
      o.source = engine::VectorSource::kExternal;
      break;
    default:
      return absl::InvalidArgumentError(absl::StrCat("unknown vector source ", s.vectors()));
  }
  if (s.dimension() < 0) {
    return absl::InvalidArgumentError(absl::StrCat("dimension ", s.dimension(), " is negative"));
  }
  // The engine checks the range and which options fit the source.
  o.dimension = static_cast<uint32_t>(s.dimension());
  o.name = s.vectors_name();
  o.query_model = s.query_model();
  return o;
}

}  // namespace neodb::api
