// Fuzzes Tokenizer::Tokenize/Encode on arbitrary bytes with both tokenizer
// kinds: a WordPiece vocabulary built here (its options taken from the first
// byte) and the shipped SentencePiece model (encoder/default_model). Oracle
// (tokenizer.h): valid UTF-8 is always accepted and invalid UTF-8 always
// rejected with INVALID_ARGUMENT; every id is inside the vocabulary; Encode
// is [CLS] Tokenize [SEP].
#include <memory>
#include <string>
#include <vector>

#include "encoder/tokenizer/sentencepiece_tokenizer.h"
#include "encoder/tokenizer/wordpiece_tokenizer.h"
#include "tests/fuzz/fuzz_util.h"
#include "tests/fuzz/utf8.h"

using neodb::encoder::Tokenizer;
using neodb::encoder::WordPieceOptions;

namespace {

// Special tokens at BERT's ids, then words, continuations and pieces of
// several scripts so that matching, splitting and [UNK] all happen.
std::vector<std::string> Vocabulary() {
  std::vector<std::string> v;
  for (int i = 0; i < 100; ++i) v.push_back("[unused" + std::to_string(i) + "]");
  v[0] = "[PAD]";
  for (const char* s : {"[UNK]", "[CLS]", "[SEP]", "[MASK]"}) v.push_back(s);
  for (char c = '!'; c <= '~'; ++c) {
    v.push_back(std::string(1, c));
    v.push_back("##" + std::string(1, c));
  }
  for (const char* s : {"the", "##ing", "search", "vector", "data", "##base", "un",
                        "##able", "\xc3\xa9", "caf\xc3\xa9", "\xe4\xb8\xad", "\xe6\x96\x87",
                        "\xd0\xbc\xd0\xb8\xd1\x80", "\xf0\x9f\x98\x80", "##\xcc\x81"}) {
    v.push_back(s);
  }
  return v;
}

std::unique_ptr<Tokenizer> MakeWordPiece(uint8_t bits) {
  WordPieceOptions o;
  o.lower_case = bits & 1;
  if (bits & 2) o.strip_accents = (bits & 4) != 0;
  o.tokenize_chinese_chars = bits & 8;
  o.match_special_tokens = bits & 16;
  o.max_input_chars_per_word = (bits & 32) ? 4 : 100;
  auto t = neodb::encoder::WordPieceTokenizer::Create(Vocabulary(), o);
  if (!t.ok()) std::fprintf(stderr, "%s\n", t.status().ToString().c_str());
  FUZZ_CHECK(t.ok());
  return std::move(*t);
}

const Tokenizer& SentencePiece() {
  static const Tokenizer* t = [] {
    auto loaded = neodb::encoder::SentencePieceTokenizer::FromFile(NEODB_FUZZ_SPM_MODEL);
    if (!loaded.ok()) {
      std::fprintf(stderr, "%s\n", loaded.status().ToString().c_str());
      std::abort();
    }
    return loaded->release();
  }();
  return *t;
}

void Check(const Tokenizer& t, std::string_view text) {
  absl::StatusOr<std::vector<int32_t>> ids = t.Tokenize(text);
  if (!neodb::fuzz::IsStrictUtf8(text)) {
    FUZZ_CHECK(!ids.ok() && ids.status().code() == absl::StatusCode::kInvalidArgument);
    return;
  }
  FUZZ_CHECK(ids.ok());
  for (int32_t id : *ids) FUZZ_CHECK(id >= 0 && id < t.vocab_size());
  absl::StatusOr<std::vector<int32_t>> encoded = t.Encode(text);
  FUZZ_CHECK(encoded.ok() && encoded->size() == ids->size() + 2);
  FUZZ_CHECK(encoded->front() == t.special().cls && encoded->back() == t.special().sep);
  FUZZ_CHECK(std::equal(ids->begin(), ids->end(), encoded->begin() + 1));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view text = neodb::fuzz::AsView(data + 1, size - 1);
  if (data[0] & 128) {
    Check(SentencePiece(), text);
  } else {
    // 64 option sets: cache each tokenizer, building them costs more than a run.
    static std::unique_ptr<Tokenizer> wordpiece[64];
    std::unique_ptr<Tokenizer>& t = wordpiece[data[0] & 63];
    if (t == nullptr) t = MakeWordPiece(data[0] & 63);
    Check(*t, text);
  }
  return 0;
}
