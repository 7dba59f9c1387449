#pragma once
// The Snowball English (Porter2) stemmer from libstemmer, owned RAII.
// libstemmer's stemmer keeps per-call state, so one object must not be used
// by two threads at once; creating one is cheap (a few small allocations).

#include <string>
#include <string_view>

struct sb_stemmer;

namespace neodb::keyword {

class SnowballStemmer {
 public:
  SnowballStemmer();  // English, UTF-8
  ~SnowballStemmer();
  SnowballStemmer(const SnowballStemmer&) = delete;
  SnowballStemmer& operator=(const SnowballStemmer&) = delete;

  // The stem of `word` (UTF-8, case-folded). Not thread-safe (see above).
  // Returns `word` unchanged when libstemmer fails (out of memory).
  std::string Stem(std::string_view word);

 private:
  sb_stemmer* stemmer_;
};

}  // namespace neodb::keyword
