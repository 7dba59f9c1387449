#pragma once
// The user's pairs for `neodb adapt`, tied to the documents of a collection.
//
// File format: JSON Lines, one object per line,
//   {"query": "...", "positive_id": "doc-id"}      the positive by document id, or
//   {"query": "...", "positive": "document text"}  by text: the collection's
//                                                   document whose normalised
//                                                   text (NormalizeText) is equal
// Other fields (e.g. "negatives") are ignored: adapt mines its own. Lines with
// the same query text are one query with several relevant documents. Every
// problem is an INVALID_ARGUMENT naming the file and 1-based line: malformed
// JSON, a missing/empty/non-string query, neither or both positive fields, a
// positive that is not a document of the collection.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"

namespace neodb::adapt {

// The collection's documents as listed from the server, in list order: the
// order of their ids (byte order), so that ranking ties broken by position
// (keyword::LegOrder) are broken by document id, as the server breaks them.
struct CollectionDocs {
  std::vector<std::string> ids;
  std::vector<std::string> texts;
  // The value of the collection's title field (its spec's title_field), which
  // its keyword index also reads; "" where the document has none as a string,
  // and for every document when the collection has no title field.
  std::vector<std::string> titles;
  absl::flat_hash_map<std::string, int64_t> index_of_id;  // id -> position

  // Appends a document. REQUIRES: `id` not yet present.
  void Add(std::string id, std::string text, std::string title = {});
  int64_t size() const { return static_cast<int64_t>(ids.size()); }
};

// One distinct query and the positions (in CollectionDocs) of its relevant
// documents, sorted, without repeats.
struct QueryPositives {
  std::string query;
  std::vector<int64_t> positives;
  int64_t first_line = 0;
};

// Lower-cased, whitespace runs collapsed to one space, trimmed: the text
// identity used to match "positive" texts and to detect duplicates.
std::string NormalizeText(const std::string& text);

absl::StatusOr<std::vector<QueryPositives>> ParseAdaptPairs(const std::string& text,
                                                            const std::string& name,
                                                            const CollectionDocs& docs);
// Reads and parses a file (NOT_FOUND when it cannot be opened).
absl::StatusOr<std::vector<QueryPositives>> ReadAdaptPairs(const std::string& path,
                                                           const CollectionDocs& docs);

struct PairSplit {
  std::vector<QueryPositives> train;
  std::vector<QueryPositives> held_out;
};

// Splits by query (a query never lands on both sides), seeded: the same
// queries, fraction and seed give the same split on every machine.
// held_out gets round(fraction * queries) queries, at least 1 and leaving at
// least 1 for training. INVALID_ARGUMENT unless 0 < fraction < 1 and there
// are at least 2 queries.
absl::StatusOr<PairSplit> SplitPairs(const std::vector<QueryPositives>& queries,
                                     double fraction, uint64_t seed);

}  // namespace neodb::adapt
