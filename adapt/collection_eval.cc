#include "adapt/collection_eval.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>
#include <optional>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "index/exact_search.h"
#include "index/keyword/fusion.h"

namespace neodb::adapt {

RankMetrics ScoreRankings(const std::vector<std::vector<int64_t>>& ranked,
                          const std::vector<std::vector<int64_t>>& relevant) {
  RankMetrics m;
  m.queries = static_cast<int64_t>(ranked.size());
  for (size_t q = 0; q < ranked.size(); ++q) {
    const std::vector<int64_t>& rel = relevant[q];
    double dcg = 0, idcg = 0, rr = 0, hits = 0;
    const size_t k = std::min<size_t>(10, ranked[q].size());
    for (size_t r = 0; r < k; ++r) {
      if (std::find(rel.begin(), rel.end(), ranked[q][r]) == rel.end()) continue;
      hits += 1;
      dcg += 1 / std::log2(static_cast<double>(r) + 2);
      if (rr == 0) rr = 1 / static_cast<double>(r + 1);
    }
    for (size_t r = 0; r < std::min<size_t>(rel.size(), 10); ++r) {
      idcg += 1 / std::log2(static_cast<double>(r) + 2);
    }
    m.ndcg_per_query.push_back(idcg > 0 ? dcg / idcg : 0);
    m.ndcg_at_10 += m.ndcg_per_query.back();
    m.recall_at_10 += rel.empty() ? 0 : hits / static_cast<double>(rel.size());
    m.mrr_at_10 += rr;
  }
  if (m.queries > 0) {
    m.ndcg_at_10 /= static_cast<double>(m.queries);
    m.recall_at_10 /= static_cast<double>(m.queries);
    m.mrr_at_10 /= static_cast<double>(m.queries);
  }
  return m;
}

absl::StatusOr<std::unique_ptr<keyword::KeywordIndex>> BuildKeywordIndex(
    const CollectionDocs& docs, const KeywordSettings& settings) {
  ASSIGN_OR_RETURN(std::unique_ptr<keyword::KeywordIndex> index,
                   keyword::KeywordIndex::Create(settings.options));
  for (int64_t i = 0; i < docs.size(); ++i) {
    // As the server's keyword part (engine/keyword_part.cc): the text,
    // and the title where there is one (an empty title adds no terms either way).
    std::optional<std::string_view> title;
    if (!docs.titles[i].empty()) title = docs.titles[i];
    RETURN_IF_ERROR(
        index->Upsert(static_cast<uint64_t>(i), docs.texts[i], title, settings.title_weight));
  }
  return index;
}

absl::StatusOr<std::vector<std::vector<keyword::RankedId>>> KeywordLegs(
    const keyword::KeywordIndex& index, const std::vector<std::string>& queries, int depth) {
  std::vector<std::vector<keyword::RankedId>> legs;
  legs.reserve(queries.size());
  for (const std::string& q : queries) {
    // The server's rule (keyword::FetchLeg, CutLeg). Search's top `depth` is
    // already cut by score, then position: a position is a document id's
    // rank here (CollectionDocs), so this is the server's cut.
    ASSIGN_OR_RETURN(std::vector<keyword::KeywordHit> hits, index.Search(q, depth));
    std::vector<keyword::RankedId> leg;
    for (const keyword::KeywordHit& h : hits) leg.push_back({h.id, h.score});
    legs.push_back(keyword::CutLeg(std::move(leg), depth));
  }
  return legs;
}

absl::StatusOr<std::vector<float>> EmbedAll(encoder::Encoder& enc,
                                            const std::vector<std::string>& texts,
                                            const encoder::EmbedOptions& options,
                                            index::Metric metric,
                                            const std::function<void(int64_t, int64_t)>& progress) {
  constexpr size_t kBatch = 64;
  const int64_t dim = enc.dim();
  std::vector<float> out;
  out.reserve(texts.size() * static_cast<size_t>(dim));
  // As the server: embedded as pooled, normalised (under cosine) by the same
  // routine the index normalises with.
  encoder::EmbedOptions opts = options;
  opts.normalize = false;
  for (size_t start = 0; start < texts.size(); start += kBatch) {
    const size_t end = std::min(texts.size(), start + kBatch);
    std::vector<std::string> batch(texts.begin() + static_cast<std::ptrdiff_t>(start),
                                   texts.begin() + static_cast<std::ptrdiff_t>(end));
    auto embedded = enc.Embed(batch, opts);
    if (!embedded.ok()) {
      return absl::Status(embedded.status().code(),
                          absl::StrCat("embedding texts ", start, "..", end - 1, ": ",
                                       embedded.status().message()));
    }
    for (const encoder::Embedding& e : *embedded) {
      out.insert(out.end(), e.vector.begin(), e.vector.end());
    }
    if (progress) progress(static_cast<int64_t>(end), static_cast<int64_t>(texts.size()));
  }
  AsIndexed(out, dim, metric);
  return out;
}

void AsIndexed(std::vector<float>& rows, int64_t dim, index::Metric metric) {
  if (metric != index::Metric::kCosine || dim <= 0) return;
  index::NormalizeRows(rows.data(), rows.size() / static_cast<size_t>(dim), static_cast<int>(dim));
}

std::vector<std::vector<keyword::RankedId>> VectorLegs(const std::vector<float>& queries,
                                                       const std::vector<float>& docs, int64_t dim,
                                                       int depth, index::Metric metric) {
  const size_t nq = queries.size() / static_cast<size_t>(dim);
  const size_t nd = docs.size() / static_cast<size_t>(dim);
  std::vector<std::vector<keyword::RankedId>> legs(nq);
  if (nq == 0 || nd == 0 || depth <= 0) return legs;
  const auto top = index::ExactTopK(docs.data(), nd, static_cast<int>(dim), {}, metric,
                                    queries.data(), nq, depth, nullptr);
  // ExactTopK's ties go to the lower row, a position: the server's cut
  // (keyword::CutLeg), as in KeywordLegs.
  for (size_t q = 0; q < nq; ++q) {
    for (const index::RowHit& h : top[q]) legs[q].push_back({h.row, h.score});
    legs[q] = keyword::CutLeg(std::move(legs[q]), depth);
  }
  return legs;
}

std::vector<int64_t> Positions(const std::vector<keyword::RankedId>& leg, size_t limit) {
  std::vector<int64_t> out;
  for (size_t i = 0; i < leg.size() && i < limit; ++i)
    out.push_back(static_cast<int64_t>(leg[i].id));
  return out;
}

std::string FusionLabel(const keyword::FusionOptions& fusion) {
  std::string label(keyword::FusionMethodName(fusion.method));
  if (fusion.method == keyword::FusionMethod::kWeighted) absl::StrAppend(&label, ":", fusion.alpha);
  return label;
}

std::vector<FusionQuality> CandidateFusions(const keyword::FusionOptions& current) {
  std::vector<keyword::FusionOptions> all = {current, keyword::FusionOptions{}};
  for (int tenth = 1; tenth <= 9; ++tenth) {
    keyword::FusionOptions o;
    o.method = keyword::FusionMethod::kWeighted;
    o.alpha = tenth / 10.0;
    all.push_back(o);
  }
  keyword::FusionOptions rrf;
  rrf.method = keyword::FusionMethod::kReciprocalRank;
  all.push_back(rrf);
  std::vector<FusionQuality> out;
  for (const keyword::FusionOptions& o : all) {
    const std::string label = FusionLabel(o);
    bool seen = false;
    for (const FusionQuality& f : out) seen = seen || f.label == label;
    if (!seen) out.push_back({.label = label, .options = o, .metrics = {}});
  }
  return out;
}

const FusionQuality& BestFusion(const ModelQuality& quality) {
  const FusionQuality* best = &quality.fusions.front();
  for (const FusionQuality& f : quality.fusions) {
    if (f.metrics.ndcg_at_10 > best->metrics.ndcg_at_10 + 0.001) best = &f;
  }
  return *best;
}

namespace {

absl::StatusOr<ModelQuality> ScoreQuerySet(encoder::Encoder& enc,
                                           const std::vector<float>& doc_vecs, const QuerySet& set,
                                           const encoder::EmbedOptions& query_opts,
                                           const EmbedSettings& settings) {
  if (set.keyword_legs.size() != set.queries.size()) {
    return absl::InternalError("keyword legs and queries differ in number");
  }
  std::vector<std::string> texts;
  std::vector<std::vector<int64_t>> relevant;
  for (const QueryPositives& q : set.queries) {
    texts.push_back(q.query);
    relevant.push_back(q.positives);
  }
  ASSIGN_OR_RETURN(std::vector<float> query_vecs,
                   EmbedAll(enc, texts, query_opts, settings.metric, nullptr));
  const auto vector_legs =
      VectorLegs(query_vecs, doc_vecs, enc.dim(), keyword::kHybridLegDepth, settings.metric);
  ModelQuality quality;
  std::vector<std::vector<int64_t>> vector_ranked;
  for (const auto& leg : vector_legs) vector_ranked.push_back(Positions(leg, 10));
  quality.vector = ScoreRankings(vector_ranked, relevant);
  quality.fusions = CandidateFusions(settings.fusion);
  for (FusionQuality& f : quality.fusions) {
    std::vector<std::vector<int64_t>> ranked;
    for (size_t q = 0; q < set.queries.size(); ++q) {
      ASSIGN_OR_RETURN(keyword::FusionResult fused,
                       keyword::Fuse(set.keyword_legs[q], vector_legs[q], 10, f.options));
      std::vector<int64_t> ids;
      for (const keyword::FusedHit& h : fused.hits) ids.push_back(static_cast<int64_t>(h.id));
      ranked.push_back(std::move(ids));
    }
    f.metrics = ScoreRankings(ranked, relevant);
  }
  quality.hybrid = quality.fusions.front().metrics;
  return quality;
}

}  // namespace

namespace {

// How the collection embeds a document (or, with `query`, a query).
encoder::EmbedOptions EmbedOptionsFor(const EmbedSettings& settings, bool query) {
  encoder::EmbedOptions o;
  o.pooling = settings.pooling;
  o.overflow = settings.overflow;
  o.prefix = query ? settings.query_prefix : settings.document_prefix;
  return o;
}

}  // namespace

double ModelLegs::Cosine(size_t query, int64_t doc) const {
  const float* qv = query_vecs.data() + static_cast<int64_t>(query) * dim;
  const float* dv = doc_vecs.data() + doc * dim;
  double s = 0, qq = 0, dd = 0;
  for (int64_t i = 0; i < dim; ++i) {
    s += static_cast<double>(qv[i]) * dv[i];
    qq += static_cast<double>(qv[i]) * qv[i];
    dd += static_cast<double>(dv[i]) * dv[i];
  }
  return qq > 0 && dd > 0 ? s / std::sqrt(qq * dd) : 0;
}

absl::StatusOr<ModelLegs> ModelVectorLegs(encoder::Encoder& enc, const CollectionDocs& docs,
                                          const std::vector<std::string>& queries,
                                          const EmbedSettings& settings, int depth,
                                          const std::function<void(int64_t, int64_t)>& progress,
                                          std::optional<std::vector<float>> given_doc_vecs) {
  ModelLegs out;
  if (given_doc_vecs.has_value()) {
    if (given_doc_vecs->size() != static_cast<size_t>(docs.size() * enc.dim())) {
      return absl::InternalError("the given document vectors do not match the collection");
    }
    out.doc_vecs = std::move(*given_doc_vecs);
  } else {
    ASSIGN_OR_RETURN(out.doc_vecs, EmbedAll(enc, docs.texts, EmbedOptionsFor(settings, false),
                                            settings.metric, progress));
  }
  const encoder::EmbedOptions query_opts = EmbedOptionsFor(settings, true);
  ASSIGN_OR_RETURN(out.query_vecs, EmbedAll(enc, queries, query_opts, settings.metric, nullptr));
  out.dim = enc.dim();
  for (const auto& leg :
       VectorLegs(out.query_vecs, out.doc_vecs, out.dim, depth, settings.metric)) {
    out.legs.push_back(Positions(leg, leg.size()));
  }
  return out;
}

absl::StatusOr<std::vector<ModelQuality>> EvaluateModel(
    encoder::Encoder& enc, const CollectionDocs& docs, const std::vector<const QuerySet*>& sets,
    const EmbedSettings& settings, const std::function<void(int64_t, int64_t)>& progress,
    const std::vector<float>* given_doc_vecs) {
  const auto start = std::chrono::steady_clock::now();
  std::vector<float> embedded;
  if (given_doc_vecs == nullptr) {
    ASSIGN_OR_RETURN(embedded, EmbedAll(enc, docs.texts, EmbedOptionsFor(settings, false),
                                        settings.metric, progress));
  } else if (given_doc_vecs->size() != static_cast<size_t>(docs.size() * enc.dim())) {
    return absl::InternalError("the given document vectors do not match the collection");
  }
  const std::vector<float>& doc_vecs = given_doc_vecs != nullptr ? *given_doc_vecs : embedded;
  const double embed_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const encoder::EmbedOptions query_opts = EmbedOptionsFor(settings, true);
  std::vector<ModelQuality> out;
  for (const QuerySet* set : sets) {
    ASSIGN_OR_RETURN(ModelQuality q, ScoreQuerySet(enc, doc_vecs, *set, query_opts, settings));
    q.embed_seconds = embed_seconds;
    out.push_back(std::move(q));
  }
  return out;
}

}  // namespace neodb::adapt
