#include "index/keyword/stop_words.h"

#include <algorithm>
#include <array>

namespace neodb::keyword {
namespace {

// Sorted, for binary search.
constexpr std::array<std::string_view, 33> kEnglishStopWords = {
    "a",   "an",    "and",  "are",   "as",    "at",   "be",   "but", "by",  "for",  "if",
    "in",  "into",  "is",   "it",    "no",    "not",  "of",   "on",  "or",  "such", "that",
    "the", "their", "then", "there", "these", "they", "this", "to",  "was", "will", "with"};

}  // namespace

bool IsEnglishStopWord(std::string_view folded) {
  return std::binary_search(kEnglishStopWords.begin(), kEnglishStopWords.end(), folded);
}

}  // namespace neodb::keyword
