#include "adapt/adapt_pairs.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "encoder/train/json_lines.h"
#include "nlohmann/json.hpp"

namespace neodb::adapt {
namespace {

using encoder::train::LineError;

// splitmix64: a portable seeded stream (std:: distributions differ between
// standard libraries).
uint64_t SplitMix(uint64_t* state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

}  // namespace

void CollectionDocs::Add(std::string id, std::string text, std::string title) {
  index_of_id.emplace(id, static_cast<int64_t>(ids.size()));
  ids.push_back(std::move(id));
  texts.push_back(std::move(text));
  titles.push_back(std::move(title));
}

std::string NormalizeText(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  bool space = false;
  for (unsigned char c : text) {
    if (std::isspace(c)) {
      space = !out.empty();
      continue;
    }
    if (space) out.push_back(' ');
    space = false;
    out.push_back(static_cast<char>(std::tolower(c)));
  }
  return out;
}

absl::StatusOr<std::vector<QueryPositives>> ParseAdaptPairs(const std::string& text,
                                                            const std::string& name,
                                                            const CollectionDocs& docs) {
  // Built on first use: only files that name positives by text pay for it.
  absl::flat_hash_map<std::string, int64_t> by_text;
  std::vector<QueryPositives> out;
  std::map<std::string, size_t> query_slot;
  RETURN_IF_ERROR(encoder::train::ForEachJsonObjectLine(text, name, [&](const nlohmann::json& obj,
                                                                        int64_t line)
                                                                        -> absl::Status {
    auto q = obj.find("query");
    if (q == obj.end() || !q->is_string() ||
        q->get<std::string>().find_first_not_of(" \t\r\n") == std::string::npos) {
      return LineError(name, line, "\"query\" must be a non-empty string");
    }
    auto pid = obj.find("positive_id");
    auto ptext = obj.find("positive");
    const bool has_id = pid != obj.end() && !pid->is_null();
    const bool has_text = ptext != obj.end() && !ptext->is_null();
    if (has_id == has_text) {
      return LineError(name, line, "give exactly one of \"positive_id\" and \"positive\"");
    }
    int64_t doc = -1;
    if (has_id) {
      if (!pid->is_string()) {
        return LineError(name, line,
                         absl::StrCat("\"positive_id\" must be a string, got ", pid->type_name()));
      }
      auto it = docs.index_of_id.find(pid->get<std::string>());
      if (it == docs.index_of_id.end()) {
        return LineError(name, line,
                         absl::StrCat("positive_id \"", pid->get<std::string>(),
                                      "\" is not a document of the collection"));
      }
      doc = it->second;
    } else {
      if (!ptext->is_string()) {
        return LineError(name, line,
                         absl::StrCat("\"positive\" must be a string, got ", ptext->type_name()));
      }
      if (by_text.empty()) {
        for (int64_t i = 0; i < docs.size(); ++i) by_text.emplace(NormalizeText(docs.texts[i]), i);
      }
      auto it = by_text.find(NormalizeText(ptext->get<std::string>()));
      if (it == by_text.end()) {
        return LineError(name, line,
                         "\"positive\" matches no document's text in the collection (compared "
                         "lower-cased with whitespace collapsed); name it by \"positive_id\"");
      }
      doc = it->second;
    }
    const std::string query = q->get<std::string>();
    auto [slot, inserted] = query_slot.emplace(query, out.size());
    if (inserted) out.push_back({query, {}, line});
    std::vector<int64_t>& pos = out[slot->second].positives;
    if (std::find(pos.begin(), pos.end(), doc) == pos.end()) pos.push_back(doc);
    return absl::OkStatus();
  }));
  if (out.empty()) return absl::InvalidArgumentError(absl::StrCat(name, ": no pairs"));
  for (QueryPositives& qp : out) std::sort(qp.positives.begin(), qp.positives.end());
  return out;
}

absl::StatusOr<std::vector<QueryPositives>> ReadAdaptPairs(const std::string& path,
                                                           const CollectionDocs& docs) {
  ASSIGN_OR_RETURN(const std::string text,
                   encoder::train::ReadWholeFile(path, "pair file"));
  return ParseAdaptPairs(text, path, docs);
}

absl::StatusOr<PairSplit> SplitPairs(const std::vector<QueryPositives>& queries, double fraction,
                                     uint64_t seed) {
  if (!(fraction > 0 && fraction < 1)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--eval-split must be in (0, 1), got ", fraction));
  }
  const int64_t n = static_cast<int64_t>(queries.size());
  if (n < 2) {
    return absl::InvalidArgumentError(
        absl::StrCat("a train/held-out split needs at least 2 distinct queries, got ", n));
  }
  int64_t held = static_cast<int64_t>(std::llround(fraction * static_cast<double>(n)));
  held = std::clamp<int64_t>(held, 1, n - 1);
  std::vector<int64_t> order(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) order[i] = i;
  uint64_t state = seed;
  for (int64_t i = n - 1; i > 0; --i) {  // Fisher-Yates
    const int64_t j = static_cast<int64_t>(SplitMix(&state) % static_cast<uint64_t>(i + 1));
    std::swap(order[i], order[j]);
  }
  std::vector<bool> is_held(static_cast<size_t>(n), false);
  for (int64_t i = 0; i < held; ++i) is_held[order[i]] = true;
  PairSplit split;
  for (int64_t i = 0; i < n; ++i) (is_held[i] ? split.held_out : split.train).push_back(queries[i]);
  return split;
}

}  // namespace neodb::adapt
