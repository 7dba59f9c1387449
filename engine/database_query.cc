// Database: the query features past one query per call: recommend (a query
// vector from example documents) and a batch of near-text queries embedded
// as one batch.
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/status_macros.h"
#include "engine/database.h"
#include "engine/grouped_search.h"
#include "engine/tenant_scope.h"
#include "engine/text_checks.h"

namespace neodb::engine {

absl::StatusOr<SearchResult> Database::Recommend(const std::string& collection,
                                                 const RecommendQuery& query,
                                                 const SearchParams& params) const {
  ASSIGN_OR_RETURN(std::shared_ptr<Collection> c, Find(collection));
  RETURN_IF_ERROR(params.Validate());
  RETURN_IF_ERROR(ValidateRecommend(query));
  for (const auto* ids : {&query.positive_ids, &query.negative_ids}) {
    for (const std::string& id : *ids) RETURN_IF_ERROR(CheckDocumentId(id));
  }
  // The examples' vectors and the search read one state (a reindex commit
  // waits for us): never one model's example against another's index.
  absl::ReaderMutexLock commit(&c->commit_mu());
  std::shared_ptr<const Collection::State> state = c->state();
  const db::CollectionSpec& spec = state->settings.spec;
  // The example ids are the tenant's own (tenant_scope.h).
  ASSIGN_OR_RETURN(const TenantScope scope, TenantScope::For(spec, params.tenant));
  std::vector<std::vector<float>> positives = query.positive_vectors;
  std::vector<std::vector<float>> negatives = query.negative_vectors;
  std::vector<std::string> missing;
  auto read = [&](const std::vector<std::string>& ids,
                  std::vector<std::vector<float>>* out) -> absl::Status {
    for (const std::string& id : ids) {
      ASSIGN_OR_RETURN(const std::string stored, scope.Stored(id));
      auto d = store_->Get(collection, stored);
      if (absl::IsNotFound(d.status())) {
        missing.push_back(id);
        continue;
      }
      RETURN_IF_ERROR(d.status());
      if (d->vector.empty()) {
        return absl::FailedPreconditionError(
            absl::StrCat("example document '", id, "' has no vector"));
      }
      out->push_back(std::move(d->vector));
    }
    return absl::OkStatus();
  };
  RETURN_IF_ERROR(read(query.positive_ids, &positives));
  RETURN_IF_ERROR(read(query.negative_ids, &negatives));
  if (!missing.empty()) {
    return absl::NotFoundError(absl::StrCat("collection '", collection,
                                            "' has no document with id ",
                                            absl::StrJoin(missing, ", ")));
  }
  ASSIGN_OR_RETURN(std::vector<float> vector,
                   RecommendVector(positives, negatives, query.negative_weight, spec.dimension));
  SearchParams p = params;
  p.exclude_ids.insert(p.exclude_ids.end(), query.positive_ids.begin(), query.positive_ids.end());
  p.exclude_ids.insert(p.exclude_ids.end(), query.negative_ids.begin(), query.negative_ids.end());
  return SearchMaybeGrouped(p, [&](const SearchParams& q) {
    return c->Search(*state, &vector, "", q, SearchMode::kVector);
  });
}

absl::StatusOr<std::vector<absl::StatusOr<SearchResult>>> Database::BatchNearText(
    const std::string& collection, const std::vector<TextQuery>& queries, absl::Time deadline,
    const CancelCheck& cancelled) const {
  ASSIGN_OR_RETURN(std::shared_ptr<Collection> c, Find(collection));
  if (queries.empty()) return absl::InvalidArgumentError("queries: none given");
  if (queries.size() > kMaxBatchQueries) {
    return absl::InvalidArgumentError(absl::StrCat("queries: ", queries.size(),
                                                   " given; at most ", kMaxBatchQueries,
                                                   " per call"));
  }
  std::vector<absl::StatusOr<SearchResult>> out(queries.size(),
                                                absl::UnknownError("not answered"));
  std::vector<absl::Status> ok(queries.size());
  for (size_t i = 0; i < queries.size(); ++i) {
    const TextQuery& q = queries[i];
    ok[i] = q.params.Validate();
    if (ok[i].ok()) ok[i] = CheckText("query", q.query);
    if (ok[i].ok() && q.instruction && !q.instruction->empty()) {
      ok[i] = CheckText("instruction", *q.instruction);
    }
  }
  absl::ReaderMutexLock commit(&c->commit_mu());
  std::shared_ptr<const Collection::State> state = c->state();
  const CollectionSettings& settings = state->settings;
  // The texts to embed, by prefix: each prefix's texts are one batch.
  std::map<std::string, std::vector<size_t>> by_prefix;
  for (size_t i = 0; i < queries.size(); ++i) {
    if (ok[i].ok() && queries[i].params.mode != SearchMode::kKeyword) {
      by_prefix[queries[i].instruction ? *queries[i].instruction
                                       : settings.spec.query_instruction]
          .push_back(i);
    }
  }
  std::vector<std::vector<float>> vectors(queries.size());
  if (!by_prefix.empty()) {
    absl::Status admitted = memory_budget_->Admit("a query that needs the encoder");
    absl::StatusOr<std::shared_ptr<Model>> m =
        admitted.ok() ? ModelOf(*state) : absl::StatusOr<std::shared_ptr<Model>>(admitted);
    std::optional<RequestTokenBudget> budget;
    if (m.ok()) budget.emplace(*(*m)->embedder, options_.max_request_tokens);
    for (auto& [prefix, indexes] : by_prefix) {
      std::vector<size_t> admitted_here;
      std::vector<std::string> texts;
      for (size_t i : indexes) {
        ok[i] = m.ok() ? budget->Add(absl::StrCat("query #", i), prefix, queries[i].query,
                                     settings.overflow)
                       : m.status();
        if (!ok[i].ok()) continue;
        admitted_here.push_back(i);
        texts.push_back(queries[i].query);
      }
      if (texts.empty()) continue;
      auto e = (*m)->batcher->Embed(std::move(texts), EmbedOptionsFor(settings, prefix), deadline,
                                    cancelled, EmbedLane::kQuery);
      for (size_t j = 0; j < admitted_here.size(); ++j) {
        if (e.ok()) {
          vectors[admitted_here[j]] = std::move((*e)[j].vector);
        } else {
          ok[admitted_here[j]] = e.status();
        }
      }
    }
  }
  for (size_t i = 0; i < queries.size(); ++i) {
    if (!ok[i].ok()) {
      out[i] = ok[i];
      continue;
    }
    const TextQuery& q = queries[i];
    const std::vector<float>* v = q.params.mode == SearchMode::kKeyword ? nullptr : &vectors[i];
    out[i] = SearchMaybeGrouped(q.params, [&](const SearchParams& p) {
      return c->Search(*state, v, q.query, p, q.params.mode);
    });
  }
  return out;
}

}  // namespace neodb::engine
