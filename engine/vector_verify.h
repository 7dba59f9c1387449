#pragma once
// Verify's vector checks (Database::Verify, database.h): each stored vector
// against the entry its collection's vector index holds for it, and stored
// vectors against their documents' texts embedded again under the
// collection's model. The id checks say the index holds the right documents;
// these say it holds the right vectors, and that those are still the texts'.
//
// Thread-safety: the functions are pure; a VerifySample is one caller's.

#include <cstdint>
#include <queue>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "db/document.h"
#include "encoder/backend.h"
#include "encoder/embedding.h"
#include "index/vector_index.h"

namespace neodb::engine {

// Documents re-embedded by a Verify without `full`: enough to catch a model
// or a store that changed under the whole collection, few enough that the
// check costs well under a second of encoder time.
inline constexpr size_t kVerifySampleSize = 64;
// Ids listed per kind of mismatch (the counts are always complete).
inline constexpr size_t kVerifyMaxListedIds = 100;

struct VectorVerifyOptions {
  // Re-embed every document of the collection, not a sample. Default: false.
  bool full = false;
  // Documents re-embedded when !full: those with the smallest SampleHash of
  // their id, the same ones on every run. Default: kVerifySampleSize.
  size_t sample = kVerifySampleSize;
};

struct VectorVerifyReport {
  // Stored vectors compared with their index entry, and those that differ
  // (ids: the first kVerifyMaxListedIds document ids).
  uint64_t index_compared = 0;
  uint64_t index_mismatches = 0;
  std::vector<std::string> index_mismatch_ids;
  // Indexed documents whose vector the index cannot give back (IVF-PQ once
  // trained keeps only codes), and why: these were not compared.
  uint64_t index_unchecked = 0;
  std::string index_unchecked_reason;
  // Documents whose text was embedded again and compared, those below
  // reembed_min_cosine, the lowest cosine seen (1 when none).
  uint64_t reembed_checked = 0;
  uint64_t reembed_mismatches = 0;
  std::vector<std::string> reembed_mismatch_ids;
  double reembed_min_cosine = 0;
  double reembed_lowest_cosine = 1;
  // Why no text was embedded again (a collection of client vectors, a model
  // that cannot be loaded here); empty when the check ran.
  std::string reembed_skipped_reason;
};

// The cosine at or above which a text embedded again under `precision`
// matches the vector stored for it (derivation in vector_verify.cc).
double ReembedMinCosine(encoder::Precision precision);

// A stable 64-bit hash of a document id (FNV-1a): the sample must be the same
// on every run, build and machine, which absl::Hash (seeded per process) is not.
uint64_t SampleHash(std::string_view id);

// Keeps the `n` documents with the smallest SampleHash among those offered:
// a deterministic sample spread over the id space, in one pass and O(n) memory.
class VerifySample {
 public:
  explicit VerifySample(size_t n) : n_(n) {}
  void Offer(const db::Document& d);
  // The kept documents, in no particular order; empties the sample.
  std::vector<db::Document> Take();

 private:
  using Entry = std::pair<uint64_t, size_t>;  // hash, slot in docs_
  size_t n_;
  std::priority_queue<Entry> heap_;  // largest hash on top
  std::vector<db::Document> docs_;
};

// Compares `d.vector` (normalised as the index normalises for its metric)
// with the entry `index` holds for d.internal_id and counts the result in
// `r`. An id the index does not hold is left to the id checks.
void CompareWithIndex(const index::VectorIndex& index, const db::Document& d,
                      VectorVerifyReport* r);

// Compares each document's stored vector with `fresh` (its text embedded
// again, same order) against r->reembed_min_cosine, counting into `r`.
void CompareReembedded(std::span<const db::Document> docs,
                       std::span<const encoder::Embedding> fresh, VectorVerifyReport* r);

}  // namespace neodb::engine
