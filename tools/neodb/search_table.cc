#include "tools/neodb/search_table.h"

#include <cstdio>
#include <vector>

namespace neodb::cli {
namespace {

std::string Fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

// A leg's "rank (score)", or "-" when that leg did not return the hit.
std::string Leg(int rank, float score) {
  if (rank <= 0) return "-";
  return std::to_string(rank) + " (" + Fixed(score, 4) + ")";
}

}  // namespace

std::string SearchTable(const v1::SearchResponse& resp, const std::string& query, bool explain,
                        const Marks& marks) {
  if (resp.hits_size() == 0) return "no hits\n";
  const std::vector<std::string> terms = QueryTerms(query);
  bool any_text = false;
  for (const auto& h : resp.hits()) any_text = any_text || !h.text().empty();
  std::vector<std::string> header = {"#", "id", "score"};
  std::vector<bool> right = {true, false, true};
  if (explain) {
    header.insert(header.end(), {"keyword", "vector"});
    right.insert(right.end(), {true, true});
  }
  if (any_text) {
    header.push_back("text");
    right.push_back(false);
  }
  std::vector<std::vector<std::string>> rows;
  for (int i = 0; i < resp.hits_size(); ++i) {
    const v1::Hit& h = resp.hits(i);
    std::vector<std::string> row = {std::to_string(i + 1), h.id(), Fixed(h.score(), 4)};
    if (explain) {
      row.push_back(Leg(h.explain().keyword_rank(), h.explain().keyword_score()));
      row.push_back(Leg(h.explain().vector_rank(), h.explain().vector_score()));
    }
    if (any_text) row.push_back(Snippet(h.text(), terms, kSnippetChars, marks));
    rows.push_back(std::move(row));
  }
  // An id could hold a newline or an escape sequence: shown on one line, as text.
  for (auto& row : rows) row[1] = Snippet(row[1], {}, row[1].size() + 3, Marks{});
  std::string out = RenderTable(header, rows, right);
  if (explain) {
    out += "mode " + resp.mode();
    // alpha is what weighted and adaptive fusion used; rrf fuses ranks and leaves it 0.
    if (resp.mode() == "hybrid") {
      out += ", fusion weight of the vector leg (alpha) " + Fixed(resp.alpha(), 2);
      if (resp.alpha() == 0) out += " (rrf: ranks fused)";
    }
    out += "; keyword and vector: each leg's rank (score), - = not returned by that leg\n";
  }
  return out;
}

}  // namespace neodb::cli
