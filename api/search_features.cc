#include "api/search_features.h"

#include "absl/strings/str_cat.h"
#include "api/convert.h"
#include "common/status_macros.h"

namespace neodb::api {
namespace {

void HitToProto(engine::Hit& h, v1::Hit* p) {
  p->set_id(std::move(h.id));
  p->set_score(h.score);
  p->set_text(std::move(h.text));
  ToProto(h.metadata, p->mutable_metadata());
  p->mutable_vector()->Add(h.vector.begin(), h.vector.end());
  if (h.explain) {
    auto* e = p->mutable_explain();
    e->set_keyword_rank(h.explain->keyword_rank);
    e->set_keyword_score(h.explain->keyword_score);
    e->set_vector_rank(h.explain->vector_rank);
    e->set_vector_score(h.explain->vector_score);
    e->set_fused_score(h.explain->fused_score);
  }
}

template <typename Req>
std::string UnsupportedOf(const Req& req) {
  if (req.has_score_threshold()) return "score_threshold";
  if (req.offset() != 0) return "offset";
  if (req.has_group_by()) return "group_by";
  return "";
}

// The batch's query `i` as the engine takes it; INVALID_ARGUMENT naming the
// field for what a batch's query may not carry.
absl::StatusOr<engine::Database::TextQuery> TextQueryOf(const v1::BatchNearTextRequest& batch,
                                                        int i) {
  const v1::NearTextRequest& q = batch.queries(i);
  if (!q.collection().empty() && q.collection() != batch.collection()) {
    return absl::InvalidArgumentError(absl::StrCat("queries[", i, "].collection is '",
                                                   q.collection(), "'; the batch's is '",
                                                   batch.collection(), "'"));
  }
  if (!q.consistency_token().empty() || q.local_only() || q.has_keyword_corpus()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "queries[", i, "]: consistency_token, local_only and keyword_corpus are not for batches"));
  }
  if (!q.tenant().empty() && q.tenant() != batch.tenant()) {
    return absl::InvalidArgumentError(absl::StrCat("queries[", i, "].tenant is '", q.tenant(),
                                                   "'; the batch's is '", batch.tenant(), "'"));
  }
  engine::Database::TextQuery out;
  ASSIGN_OR_RETURN(out.params, SearchParamsFromProto(q));
  out.params.tenant = batch.tenant();
  out.query = q.query();
  if (q.has_instruction()) out.instruction = q.instruction();
  return out;
}

void SetError(const absl::Status& s, v1::BatchSearchResult* out) {
  out->set_code(static_cast<int>(s.code()));
  out->set_message(std::string(s.message()));
}

}  // namespace

void SearchResultToProto(engine::SearchResult& r, v1::SearchResponse* out) {
  out->set_model_id(r.model_id);
  out->set_mode(std::string(engine::SearchModeName(r.mode)));
  out->set_alpha(r.alpha);
  for (engine::Hit& h : r.hits) HitToProto(h, out->add_hits());
  for (engine::HitGroup& g : r.groups) {
    v1::HitGroup* p = out->add_groups();
    *p->mutable_value() = ToProto(g.value);
    for (engine::Hit& h : g.hits) HitToProto(h, p->add_hits());
  }
}

absl::Status NotYetForSharded(const std::string& feature, const std::string& collection) {
  return absl::FailedPreconditionError(absl::StrCat(
      feature, " is not yet for sharded collections; '", collection, "' is sharded"));
}

std::string ShardedUnsupportedFeature(const v1::NearTextRequest& req) {
  return UnsupportedOf(req);
}
std::string ShardedUnsupportedFeature(const v1::NearVectorRequest& req) {
  return UnsupportedOf(req);
}

absl::StatusOr<v1::SearchResponse> RecommendHere(const engine::Database& db,
                                                 const v1::RecommendRequest& req) {
  ASSIGN_OR_RETURN(engine::SearchParams params, SearchParamsFromProto(req));
  ASSIGN_OR_RETURN(engine::SearchResult r,
                   db.Recommend(req.collection(), RecommendFromProto(req), params));
  v1::SearchResponse out;
  SearchResultToProto(r, &out);
  return out;
}

absl::StatusOr<v1::BatchSearchResponse> BatchNearTextHere(const engine::Database& db,
                                                          const v1::BatchNearTextRequest& req,
                                                          absl::Time deadline,
                                                          const engine::CancelCheck& cancelled) {
  if (req.queries_size() > static_cast<int>(engine::Database::kMaxBatchQueries)) {
    return absl::InvalidArgumentError(absl::StrCat("queries: ", req.queries_size(),
                                                   " given; at most ",
                                                   engine::Database::kMaxBatchQueries,
                                                   " per call"));
  }
  // The queries that convert go to the engine; the others answer their error.
  std::vector<absl::Status> parse(req.queries_size());
  std::vector<engine::Database::TextQuery> queries;
  std::vector<int> index;  // queries[j] is request query index[j]
  for (int i = 0; i < req.queries_size(); ++i) {
    auto q = TextQueryOf(req, i);
    if (!q.ok()) {
      parse[i] = q.status();
      continue;
    }
    queries.push_back(std::move(*q));
    index.push_back(i);
  }
  v1::BatchSearchResponse out;
  for (int i = 0; i < req.queries_size(); ++i) out.add_results();
  if (!queries.empty()) {
    ASSIGN_OR_RETURN(auto answers,
                     db.BatchNearText(req.collection(), queries, deadline, cancelled));
    for (size_t j = 0; j < answers.size(); ++j) {
      v1::BatchSearchResult* r = out.mutable_results(index[j]);
      if (answers[j].ok()) {
        SearchResultToProto(*answers[j], r->mutable_response());
      } else {
        SetError(answers[j].status(), r);
      }
    }
  } else if (req.queries_size() == 0) {
    return absl::InvalidArgumentError("queries: none given");
  } else if (!db.HasCollection(req.collection())) {
    return absl::NotFoundError(absl::StrCat("collection '", req.collection(), "' does not exist"));
  }
  for (int i = 0; i < req.queries_size(); ++i) {
    if (!parse[i].ok()) SetError(parse[i], out.mutable_results(i));
  }
  return out;
}

}  // namespace neodb::api
