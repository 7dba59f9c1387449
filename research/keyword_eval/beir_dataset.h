#pragma once
// A BEIR dataset directory (corpus.jsonl, queries.jsonl, qrels/SPLIT.tsv) and
// TREC-style run files (`query-id doc-id score` per line), read into memory.

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace neodb::tools {

struct BeirDocument {
  std::string id;
  std::string title;
  std::string text;
};

struct BeirDataset {
  std::vector<BeirDocument> corpus;
  // The split's queries (those with at least one positive qrel), by id.
  std::map<std::string, std::string> queries;
};

// Reads `dir`; the qrels file's header line, if any, is recognised by its
// non-numeric score column. NOT_FOUND / INVALID_ARGUMENT for missing files or
// malformed lines (the JSON parser's exceptions are caught here).
absl::StatusOr<BeirDataset> LoadBeirDataset(const std::string& dir, const std::string& split);

// query id -> (doc id, score) best first.
using Run = std::map<std::string, std::vector<std::pair<std::string, float>>>;
absl::StatusOr<Run> LoadRun(const std::string& path);

}  // namespace neodb::tools
