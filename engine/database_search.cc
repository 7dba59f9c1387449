// Database: the read path (get, list, near-text, near-vector, embed): finds
// the collection, embeds the query with its model, and lets it search.
#include "absl/strings/str_cat.h"
#include "engine/database.h"
#include "engine/tenant_scope.h"
#include "engine/grouped_search.h"
#include "engine/text_checks.h"
#include "engine/vector_checks.h"
#include "common/status_macros.h"

namespace neodb::engine {
absl::StatusOr<std::vector<std::optional<db::Document>>> Database::Get(
    const std::string& collection, const std::vector<std::string>& ids) const {
  ASSIGN_OR_RETURN(std::shared_ptr<Collection> c, Find(collection));
  std::vector<std::optional<db::Document>> out;
  for (const auto& id : ids) {
    RETURN_IF_ERROR(CheckDocumentId(id));
    auto d = store_->Get(collection, id);
    if (absl::IsNotFound(d.status())) {
      out.push_back(std::nullopt);
      continue;
    }
    RETURN_IF_ERROR(d.status());
    out.push_back(std::move(*d));
  }
  return out;
}

absl::StatusOr<TenantScope> Database::ScopeOf(const std::string& collection,
                                              std::string_view tenant) const {
  ASSIGN_OR_RETURN(std::shared_ptr<Collection> c, Find(collection));
  return TenantScope::For(c->state()->settings.spec, tenant);
}

absl::StatusOr<db::ListResult> Database::List(const std::string& collection,
                                              const std::string& page_token, size_t limit,
                                              std::string_view tenant) const {
  ASSIGN_OR_RETURN(std::shared_ptr<Collection> c, Find(collection));
  ASSIGN_OR_RETURN(const TenantScope scope, TenantScope::For(c->state()->settings.spec, tenant));
  return store_->List(collection, page_token, limit, scope.prefix());
}

absl::StatusOr<SearchResult> Database::NearText(const std::string& collection,
                                                const std::string& query,
                                                const std::optional<std::string>& instruction,
                                                const SearchParams& params, absl::Time deadline,
                                                const CancelCheck& cancelled) const {
  ASSIGN_OR_RETURN(std::shared_ptr<Collection> c, Find(collection));
  RETURN_IF_ERROR(params.Validate());
  RETURN_IF_ERROR(CheckText("query", query));
  if (instruction && !instruction->empty()) RETURN_IF_ERROR(CheckText("instruction", *instruction));
  // One state from embedding to verification: the query is embedded with the
  // model whose index it searches (a reindex commit waits for us).
  absl::ReaderMutexLock commit(&c->commit_mu());
  std::shared_ptr<const Collection::State> state = c->state();
  const CollectionSettings& settings = state->settings;
  // Before any embedding: a call that names the wrong tenant costs nothing.
  RETURN_IF_ERROR(TenantScope::For(settings.spec, params.tenant).status());
  if (params.mode == SearchMode::kKeyword) {
    return SearchMaybeGrouped(params, [&](const SearchParams& p) {
      return c->Search(*state, nullptr, query, p, SearchMode::kKeyword);
    });
  }
  RETURN_IF_ERROR(memory_budget_->Admit("a query that needs the encoder"));
  ASSIGN_OR_RETURN(std::shared_ptr<Model> m, ModelOf(*state));
  const std::string prefix = instruction ? *instruction : settings.spec.query_instruction;
  RequestTokenBudget budget(*m->embedder, options_.max_request_tokens);
  RETURN_IF_ERROR(budget.Add("query", prefix, query, settings.overflow));
  ASSIGN_OR_RETURN(
      std::vector<encoder::Embedding> e,
      m->batcher->Embed({query}, EmbedOptionsFor(settings, prefix), deadline, cancelled,
                        EmbedLane::kQuery));
  return SearchMaybeGrouped(params, [&](const SearchParams& p) {
    return c->Search(*state, &e[0].vector, query, p, params.mode);
  });
}

absl::StatusOr<SearchResult> Database::NearVector(const std::string& collection,
                                                  const std::vector<float>& vector,
                                                  const SearchParams& params) const {
  ASSIGN_OR_RETURN(std::shared_ptr<Collection> c, Find(collection));
  RETURN_IF_ERROR(params.Validate());
  absl::ReaderMutexLock commit(&c->commit_mu());
  std::shared_ptr<const Collection::State> state = c->state();
  return SearchMaybeGrouped(params, [&](const SearchParams& p) {
    return c->Search(*state, &vector, "", p, SearchMode::kVector);
  });
}

absl::StatusOr<keyword::CorpusStats> Database::KeywordStatistics(
    const std::string& collection, const std::string& query,
    const std::function<bool(std::string_view doc_id)>& within) const {
  ASSIGN_OR_RETURN(std::shared_ptr<Collection> c, Find(collection));
  RETURN_IF_ERROR(CheckText("query", query));
  absl::ReaderMutexLock commit(&c->commit_mu());
  return c->KeywordStatistics(*c->state(), query, within);
}

absl::StatusOr<std::vector<encoder::Embedding>> Database::Embed(
    std::vector<std::string> texts, const encoder::EmbedOptions& options, absl::Time deadline,
    const CancelCheck& cancelled) const {
  if (texts.empty()) return absl::InvalidArgumentError("no texts to embed");
  RETURN_IF_ERROR(memory_budget_->Admit("embed"));
  for (size_t i = 0; i < texts.size(); ++i) {
    RETURN_IF_ERROR(CheckText(absl::StrCat("text #", i), texts[i]));
  }
  std::shared_ptr<Model> m = models_->Default();
  if (!m) return absl::UnavailableError("server is shutting down");
  RequestTokenBudget budget(*m->embedder, options_.max_request_tokens);
  for (size_t i = 0; i < texts.size(); ++i) {
    RETURN_IF_ERROR(
        budget.Add(absl::StrCat("text #", i), options.prefix, texts[i], options.overflow));
  }
  return m->batcher->Embed(std::move(texts), options, deadline, cancelled);
}

}  // namespace neodb::engine
