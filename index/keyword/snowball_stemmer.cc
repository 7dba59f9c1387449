#include "index/keyword/snowball_stemmer.h"

#include "common/status_macros.h"
#include "libstemmer.h"

namespace neodb::keyword {

SnowballStemmer::SnowballStemmer() : stemmer_(sb_stemmer_new("english", "UTF_8")) {
  // "english"/"UTF_8" is compiled into every libstemmer: null means the
  // library is broken or out of memory at start-up, not bad input.
  NEODB_CHECK(stemmer_ != nullptr);
}

SnowballStemmer::~SnowballStemmer() { sb_stemmer_delete(stemmer_); }

std::string SnowballStemmer::Stem(std::string_view word) {
  const sb_symbol* stem = sb_stemmer_stem(stemmer_, reinterpret_cast<const sb_symbol*>(word.data()),
                                          static_cast<int>(word.size()));
  if (stem == nullptr) return std::string(word);
  return std::string(reinterpret_cast<const char*>(stem),
                     static_cast<size_t>(sb_stemmer_length(stemmer_)));
}

}  // namespace neodb::keyword
