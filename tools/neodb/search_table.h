#pragma once
// `neodb search`'s readable answer (without --json): one row per hit with its
// rank, id, score and a snippet of its text with the query's terms marked;
// with explain, each leg's rank and score and, under the table, the mode and
// the vector share (alpha) the fusion used.

#include <string>

#include "neodb/v1/neodb.pb.h"
#include "tools/neodb/text_table.h"

namespace neodb::cli {

// Code points of text shown per hit.
inline constexpr size_t kSnippetChars = 80;

std::string SearchTable(const v1::SearchResponse& resp, const std::string& query, bool explain,
                        const Marks& marks);

}  // namespace neodb::cli
