#pragma once
// KeywordIndex: an in-memory inverted index with exact BM25 ranking, keyed by
// the engine's internal document id. Like the vector indexes it is derived
// data: the store is the truth, and the engine keeps it equal by applying the
// same changes (Upsert on write, Remove on delete) at start-up replay, catch-up
// and rebuild, and persists it with Save (a snapshot that records the change-
// log sequence it covers) so start-up replays only the changes after it.
//
// Scoring (Robertson/Lucene BM25, Anserini's defaults for BEIR):
//   score(q, d) = sum over distinct query terms t in d of
//                 qtf(t) * idf(t) * tf(t,d) * (k1 + 1) /
//                 (tf(t,d) + k1 * (1 - b + b * len(d) / avglen))
//   idf(t)     = ln(1 + (N - df(t) + 0.5) / (df(t) + 0.5))
// qtf(t) is how often t occurs in the analysed query (Anserini's bag-of-words
// weighting); N counts every document, empty ones included; len(d) counts the
// document's tokens other than overlap tokens (analyzer.h). Statistics are
// exact at every moment: a Remove takes the document out of N, df and avglen.
//
// Fields (BM25F with one b, Robertson et al. 2004 "Simple BM25 extension to
// multiple weighted fields"): a document is one or more texts with a weight;
// tf(t,d) = sum_f weight_f * tf(t,f) and len(d) = sum_f weight_f * len(f), so
// a title field with weight 2 counts every title word twice, in the score and
// in the length. With one field of weight 1 this is plain BM25 on that text.
//
// Layout: a term dictionary (term -> id), a postings vector per term of
// (slot, tf) sorted by slot, and a forward list per document slot of
// (term id, tf) so that Remove touches only the document's own terms. Slots
// are dense uint32 numbers reused after removal. Search is term-at-a-time into
// a dense score accumulator, then the filter, then a k-bounded heap.
//
// Thread-safe: an internal reader/writer lock; Search, Stats and the other
// const methods run concurrently with each other, Upsert/Remove exclusively.
// Documents are analysed before the lock is taken.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "common/env.h"
#include "index/keyword/analyzer.h"

namespace neodb::keyword {

struct KeywordOptions {
  // The analyzer for documents and queries. Default: english.
  AnalyzerKind analyzer = AnalyzerKind::kEnglish;
  // BM25 term-frequency saturation; finite, >= 0. Default: 0.9 (Anserini BEIR).
  double k1 = 0.9;
  // BM25 length normalisation; in [0, 1]. Default: 0.4 (Anserini BEIR).
  double b = 0.4;
};

// One text of a document and its weight (see "Fields" above).
struct FieldText {
  std::string_view text;
  // REQUIRES: finite, > 0 and <= kMaxFieldWeight.
  float weight = 1.0f;
};
inline constexpr float kMaxFieldWeight = 1000.0f;

struct KeywordHit {
  uint64_t id = 0;
  float score = 0;
};

// Returns true for the ids a query may return (a metadata filter). Applied
// before top-k selection (a filtered search returns min(k, allowed matches)),
// but called only for matching documents that would enter the current top k,
// so it must be a pure predicate; must be thread-safe if the caller searches
// from several threads with one filter.
using IdFilter = std::function<bool(uint64_t id)>;

struct KeywordStats {
  uint64_t documents = 0;
  uint64_t terms = 0;     // distinct terms with at least one posting
  uint64_t postings = 0;  // (term, document) pairs
  double average_length = 0;
  uint64_t memory_bytes = 0;  // heap held by the index, estimated from capacities
};

// The corpus statistics BM25 ranks by (N, the summed length behind avglen,
// df of each query term): normally the index's own. A collection split into
// shards on several nodes ranks by the whole collection's, summed over its
// shards (TermStatistics on each, then passed to Search), so that a document
// scores as it would in one unsplit index (api/fan_out.h).
struct CorpusStats {
  uint64_t documents = 0;
  double total_length = 0;
  // By analysed term (the analyzer's output, as Search sees the query).
  absl::flat_hash_map<std::string, uint64_t> document_frequency;
  // The statistics of a part of this index's documents (a tenant's), not of
  // a whole that holds them: Search takes a df below the index's own then
  // (for a whole, a df below it is a bad corpus and is raised to it).
  bool part_of_index = false;
};

// (document id, weighted term frequency), by ascending id.
using TermPostings = std::vector<std::pair<uint64_t, float>>;

inline constexpr int kMaxSearchK = 100000;

class KeywordIndex {
 public:
  // INVALID_ARGUMENT unless k1 is finite and >= 0 and b is in [0, 1].
  static absl::StatusOr<std::unique_ptr<KeywordIndex>> Create(const KeywordOptions& options);

  const KeywordOptions& options() const { return options_; }
  const Analyzer& analyzer() const { return analyzer_; }

  // Indexes document `id` from `fields`, replacing any earlier version.
  // INVALID_ARGUMENT for a bad weight; RESOURCE_EXHAUSTED past 2^32 - 1
  // documents. No fields, or only empty text, indexes an empty document.
  absl::Status Upsert(uint64_t id, std::span<const FieldText> fields);
  // Shorthand for one field of weight 1.
  absl::Status Upsert(uint64_t id, std::string_view text);
  // The fields of a collection's document: its text at weight 1 and, when it
  // has one, its title at `title_weight`.
  absl::Status Upsert(uint64_t id, std::string_view text, std::optional<std::string_view> title,
                      float title_weight);

  // Takes document `id` out; false if it was not there (replay may repeat).
  bool Remove(uint64_t id);

  // The best min(k, matches) documents for `query` by BM25, best first (ties by
  // ascending id), among those `allow` accepts (all if empty). A matching
  // document contains at least one query term. INVALID_ARGUMENT unless
  // 1 <= k <= kMaxSearchK. An empty or all-stop-word query returns no hits.
  // `corpus`, when given, replaces the index's own statistics (see
  // CorpusStats; a term it lacks keeps this index's df, its documents and
  // total_length must be positive, else the index's own are used).
  absl::StatusOr<std::vector<KeywordHit>> Search(std::string_view query, int k,
                                                 const IdFilter& allow = nullptr,
                                                 const CorpusStats* corpus = nullptr) const;

  // This index's statistics for `query`'s distinct analysed terms, over the
  // documents `within` accepts (all if empty: O(terms); with a filter it
  // visits every document and the terms' postings).
  CorpusStats TermStatistics(std::string_view query, const IdFilter& within = nullptr) const;
  // Search over the documents among `ids` (a tenant's) only, scored from
  // their own terms: the cost is theirs, not the index's. The same scores
  // and order as Search with a filter that accepts just them.
  absl::StatusOr<std::vector<KeywordHit>> SearchAmong(std::string_view query, int k,
                                                      std::span<const int64_t> ids,
                                                      const IdFilter& allow = nullptr,
                                                      const CorpusStats* corpus = nullptr) const;
  // As above over the documents among `ids` (distinct; ids the index lacks
  // are skipped), counted from those documents alone, not from a pass over
  // every document or every posting, so a tenant's statistics cost what its
  // own documents cost (engine/tenant_scope.h). part_of_index is set.
  CorpusStats TermStatistics(std::string_view query, std::span<const int64_t> ids) const;

  KeywordStats Stats() const;
  size_t size() const;
  bool Contains(uint64_t id) const;
  // Every indexed id, ascending: for Verify against the store.
  std::vector<uint64_t> Ids() const;
  // A 64-bit digest of the content (ids, lengths, terms, frequencies), equal
  // for two indexes that hold the same documents, whatever the order of
  // operations that built them. For Verify: rebuild from the store, compare.
  uint64_t Digest() const;

  // Inspection for tests and tools. Every term, ascending; one term's postings.
  std::vector<std::string> Terms() const;
  TermPostings Postings(std::string_view term) const;
  // The weighted length of `id`, or -1 if absent.
  double DocumentLength(uint64_t id) const;

  // Writes a snapshot to `path` atomically (keyword_snapshot.h has the format).
  // `covered_seq` is the last change-log sequence the index reflects; the
  // caller guarantees no Upsert/Remove runs between reading that sequence and
  // Save returning (it holds its own write lock), as for vector snapshots.
  // Written through `env` (common/env.h).
  absl::Status Save(const std::string& path, uint64_t covered_seq, Env* env = Env::Default()) const;

  struct Loaded {
    std::unique_ptr<KeywordIndex> index;
    uint64_t covered_seq = 0;
  };
  // Reads a snapshot written by Save, through `env`. DATA_LOSS for a corrupt,
  // truncated or inconsistent file (never a partially loaded index);
  // NOT_FOUND if missing.
  static absl::StatusOr<Loaded> Load(const std::string& path, Env* env = Env::Default());

 private:
  // Search and SearchAmong (`among` non-null).
  absl::StatusOr<std::vector<KeywordHit>> Rank(std::string_view query, int k,
                                               const IdFilter& allow, const CorpusStats* corpus,
                                               const std::span<const int64_t>* among) const;
  struct Posting {
    uint32_t slot;
    float tf;
  };
  struct TermFreq {
    uint32_t term;
    float tf;
  };
  // An analysed document before it is applied: distinct terms and weights.
  struct DocTerms {
    std::vector<std::pair<std::string, float>> terms;
    double length = 0;
  };

  explicit KeywordIndex(const KeywordOptions& options);

  absl::StatusOr<DocTerms> AnalyzeDocument(std::span<const FieldText> fields) const;
  absl::Status AddLocked(uint64_t id, const DocTerms& doc) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  bool RemoveLocked(uint64_t id) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  uint32_t TermIdLocked(const std::string& term) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The canonical serialised content (keyword_snapshot.cc): Save's payload and
  // Digest's input.
  std::string CanonicalPayloadLocked() const ABSL_SHARED_LOCKS_REQUIRED(mu_);
  absl::Status LoadPayload(std::string_view payload);

  const KeywordOptions options_;
  const Analyzer analyzer_;

  mutable absl::Mutex mu_;
  absl::flat_hash_map<std::string, uint32_t> term_ids_ ABSL_GUARDED_BY(mu_);
  std::vector<std::string> term_text_ ABSL_GUARDED_BY(mu_);          // by term id
  std::vector<std::vector<Posting>> postings_ ABSL_GUARDED_BY(mu_);  // by term id
  std::vector<uint32_t> free_terms_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<uint64_t, uint32_t> slot_of_ ABSL_GUARDED_BY(mu_);
  std::vector<uint64_t> id_of_slot_ ABSL_GUARDED_BY(mu_);
  std::vector<float> length_ ABSL_GUARDED_BY(mu_);                   // by slot
  std::vector<std::vector<TermFreq>> forward_ ABSL_GUARDED_BY(mu_);  // by slot
  std::vector<uint32_t> free_slots_ ABSL_GUARDED_BY(mu_);
  double total_length_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t postings_count_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace neodb::keyword
