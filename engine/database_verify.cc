// Database::Verify: the indexes against the store (ids, keyword content,
// vectors), and the stored vectors against their texts embedded again.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "engine/database.h"

namespace neodb::engine {
namespace {

// Texts per encoder call of the re-embed check.
constexpr size_t kReembedBatch = 64;

}  // namespace

absl::StatusOr<VerifyReport> Database::Verify(const std::string& name,
                                              const VectorVerifyOptions& options) const {
  VerifyReport r;
  std::shared_ptr<const Collection::State> state;
  VerifySample sample(options.full ? 0 : options.sample);
  {
    // Hold this collection's writes still so its store and indexes are
    // compared at one point (other collections' writes go on).
    std::unique_lock<std::mutex> wlock;
    ASSIGN_OR_RETURN(std::shared_ptr<Collection> c, FindLocked(name, &wlock));
    state = c->state();
    r.model_id = state->settings.spec.model_id;
    const index::VectorIndex& vectors = state->indexes->vector().index();
    std::vector<int64_t> stored;
    // The deep check of the keyword index: the same documents give the same
    // postings whatever the order of the operations that built them.
    ASSIGN_OR_RETURN(std::unique_ptr<KeywordPart> fresh, KeywordPart::Make(state->settings));
    std::vector<Change> batch;
    RETURN_IF_ERROR(store_->ScanDocuments(name, [&](const db::Document& d) -> absl::Status {
      stored.push_back(static_cast<int64_t>(d.internal_id));
      if (d.model_id != r.model_id) ++r.foreign_model;
      CompareWithIndex(vectors, d, &r.vectors);
      sample.Offer(d);
      batch.push_back(Change{0, 0, d});
      if (batch.size() >= 1024) {
        RETURN_IF_ERROR(fresh->Apply(batch));
        batch.clear();
      }
      return absl::OkStatus();
    }));
    RETURN_IF_ERROR(fresh->Apply(batch));
    r.keyword_content_matches =
        fresh->index().Digest() == state->indexes->keyword().index().Digest();
    r.stored = stored.size();
    std::sort(stored.begin(), stored.end());
    // Every derived index must hold exactly the stored ids; the vector index's
    // count is the one reported as `indexed`.
    for (const DerivedIndex* d : state->indexes->all()) {
      std::vector<int64_t> indexed = d->Ids();  // ascending
      if (d == &state->indexes->vector()) r.indexed = indexed.size();
      std::vector<int64_t> diff;
      std::set_difference(stored.begin(), stored.end(), indexed.begin(), indexed.end(),
                          std::back_inserter(diff));
      r.missing_from_index += diff.size();
      const size_t missing = diff.size();
      diff.clear();
      std::set_difference(indexed.begin(), indexed.end(), stored.begin(), stored.end(),
                          std::back_inserter(diff));
      r.stale_in_index += diff.size();
      if (d == &state->indexes->keyword()) {
        r.keyword_indexed = indexed.size();
        r.keyword_missing = missing;
        r.keyword_stale = diff.size();
      }
    }
  }
  // Encoder work (minutes with `full` on a large collection) must not hold
  // writes up: each document read below is compared with its own text, which
  // needs no agreement with the indexes.
  RETURN_IF_ERROR(VerifyReembedded(*state, options, sample.Take(), &r.vectors));
  return r;
}

absl::Status Database::VerifyReembedded(const Collection::State& state,
                                        const VectorVerifyOptions& options,
                                        std::vector<db::Document> sample,
                                        VectorVerifyReport* r) const {
  const CollectionSettings& settings = state.settings;
  const db::CollectionSpec& spec = settings.spec;
  if (settings.source == VectorSource::kExternal) {
    r->reembed_skipped_reason = "the collection holds client-supplied vectors: no model made them";
    return absl::OkStatus();
  }
  absl::StatusOr<std::shared_ptr<Model>> model = ModelOf(state);
  if (!model.ok()) {
    // Reported, not failed: the index checks above stand on their own.
    r->reembed_skipped_reason =
        absl::StrCat("the collection's model cannot embed here: ", model.status().message());
    return absl::OkStatus();
  }
  absl::StatusOr<encoder::Precision> precision = encoder::ParsePrecision(spec.precision);
  // The looser of the recorded precision and the one the model runs (a CPU
  // without the instructions runs F32): either may have made the vectors.
  r->reembed_min_cosine =
      std::min(ReembedMinCosine(precision.ok() ? *precision : encoder::Precision::kInt8),
               ReembedMinCosine((*model)->embedder->precision()));
  const encoder::EmbedOptions embed_options = EmbedOptionsFor(settings, spec.document_instruction);
  std::vector<db::Document> batch;
  auto check = [&]() -> absl::Status {
    // Only the collection's own model's vectors (foreign_model counts the rest).
    std::erase_if(batch, [&](const db::Document& d) { return d.model_id != spec.model_id; });
    if (batch.empty()) return absl::OkStatus();
    std::vector<std::string> texts;
    texts.reserve(batch.size());
    for (const auto& d : batch) texts.push_back(d.text);
    auto fresh = (*model)->batcher->Embed(std::move(texts), embed_options, absl::InfiniteFuture());
    if (!fresh.ok()) {
      return absl::Status(fresh.status().code(),
                          absl::StrCat("verify: embedding the texts of collection '", spec.name,
                                       "' again: ", fresh.status().message()));
    }
    CompareReembedded(batch, *fresh, r);
    batch.clear();
    return absl::OkStatus();
  };
  if (!options.full) {
    for (size_t i = 0; i < sample.size(); i += kReembedBatch) {
      const size_t end = std::min(sample.size(), i + kReembedBatch);
      batch.assign(std::make_move_iterator(sample.begin() + i),
                   std::make_move_iterator(sample.begin() + end));
      RETURN_IF_ERROR(check());
    }
    return absl::OkStatus();
  }
  RETURN_IF_ERROR(store_->ScanDocuments(spec.name, [&](const db::Document& d) -> absl::Status {
    batch.push_back(d);
    return batch.size() >= kReembedBatch ? check() : absl::OkStatus();
  }));
  return check();
}

}  // namespace neodb::engine
