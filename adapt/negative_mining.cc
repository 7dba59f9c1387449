#include "adapt/negative_mining.h"

#include <algorithm>
#include <cctype>
#include <set>
#include <string>

namespace neodb::adapt {
namespace {

std::set<std::string> Words(const std::string& text) {
  std::set<std::string> words;
  std::string w;
  for (unsigned char c : text) {
    if (std::isalnum(c)) {
      w.push_back(static_cast<char>(std::tolower(c)));
    } else if (!w.empty()) {
      words.insert(std::move(w));
      w.clear();
    }
  }
  if (!w.empty()) words.insert(std::move(w));
  return words;
}

}  // namespace

double WordJaccard(const std::string& a, const std::string& b) {
  const std::set<std::string> wa = Words(a), wb = Words(b);
  if (wa.empty() && wb.empty()) return 1;
  size_t common = 0;
  for (const std::string& w : wa) common += wb.count(w);
  return static_cast<double>(common) / static_cast<double>(wa.size() + wb.size() - common);
}

bool IsNearDuplicate(const std::string& candidate, const std::string& positive,
                     double jaccard_threshold) {
  if (NormalizeText(candidate) == NormalizeText(positive)) return true;
  return WordJaccard(candidate, positive) >= jaccard_threshold;
}

std::vector<int64_t> MineNegatives(const std::vector<int64_t>& server_leg,
                                   const std::vector<int64_t>& keyword_leg,
                                   const std::vector<int64_t>& positives,
                                   const CollectionDocs& docs, const MiningOptions& options,
                                   const QueryScore& score, int64_t* passed_over_by_score) {
  std::vector<int64_t> out;
  std::set<int64_t> seen(positives.begin(), positives.end());
  bool score_rule = options.max_score_ratio > 0 && score != nullptr && !positives.empty();
  double ceiling = 0;
  if (score_rule) {
    double lowest = score(positives[0]);
    for (int64_t p : positives) lowest = std::min(lowest, score(p));
    // A fraction of a score at or below 0 means nothing: a model that puts a
    // positive there cannot tell what else is relevant, so nothing is passed over.
    score_rule = lowest > 0;
    ceiling = options.max_score_ratio * lowest;
  }
  const size_t depth = std::max(server_leg.size(), keyword_leg.size());
  auto consider = [&](int64_t doc) {
    if (static_cast<int>(out.size()) >= options.count || !seen.insert(doc).second) return;
    for (int64_t p : positives) {
      if (IsNearDuplicate(docs.texts[doc], docs.texts[p], options.jaccard_threshold)) return;
    }
    if (score_rule && score(doc) > ceiling) {
      if (passed_over_by_score != nullptr) ++*passed_over_by_score;
      return;
    }
    out.push_back(doc);
  };
  for (size_t r = static_cast<size_t>(std::max(0, options.skip));
       r < depth && static_cast<int>(out.size()) < options.count; ++r) {
    if (r < server_leg.size()) consider(server_leg[r]);
    if (r < keyword_leg.size()) consider(keyword_leg[r]);
  }
  return out;
}

}  // namespace neodb::adapt
