// Fuzzes loading a tokenizer from hostile files: vocab.txt, tokenizer.json,
// tokenizer_config.json and a SentencePiece *.model (the first byte picks
// which; the rest is the file). Oracle (tokenizer.h, wordpiece_json.h): a
// loaded tokenizer tokenizes text into ids inside its vocabulary, and what
// SaveTo writes, LoadTokenizer reads back into the same tokenizer.
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "encoder/tokenizer/sentencepiece_tokenizer.h"
#include "encoder/tokenizer/tokenizer.h"
#include "encoder/tokenizer/wordpiece_json.h"
#include "encoder/tokenizer/wordpiece_tokenizer.h"
#include "tests/fuzz/fuzz_util.h"

using neodb::encoder::Tokenizer;

namespace {

constexpr std::string_view kSamples[] = {
    "Hello, world! The searching of vectors.", "caf\xc3\xa9 \xe4\xb8\xad\xe6\x96\x87 [MASK] x",
    "", "   \t\n", "[UNK][CLS]##s unable"};

void CheckLoaded(const Tokenizer& t, std::string_view kind) {
  FUZZ_CHECK(t.vocab_size() > 0);
  std::vector<std::vector<int32_t>> before;
  for (std::string_view s : kSamples) {
    absl::StatusOr<std::vector<int32_t>> ids = t.Tokenize(s);
    FUZZ_CHECK(ids.ok());
    for (int32_t id : *ids) {
      FUZZ_CHECK(id >= 0 && id < t.vocab_size());
      (void)t.IdToToken(id);
    }
    before.push_back(std::move(*ids));
  }
  // One directory per kind: SaveTo replaces only its own files, so a
  // directory never holds two tokenizers for LoadTokenizer to choose from.
  const std::string dir = neodb::fuzz::ScratchDir() + "/" + std::string(kind);
  std::filesystem::create_directories(dir);
  FUZZ_CHECK(t.SaveTo(dir).ok());
  absl::StatusOr<std::unique_ptr<Tokenizer>> again = neodb::encoder::LoadTokenizer(dir);
  FUZZ_CHECK(again.ok());
  FUZZ_CHECK((*again)->vocab_size() == t.vocab_size() && (*again)->kind() == t.kind());
  for (size_t i = 0; i < std::size(kSamples); ++i) {
    absl::StatusOr<std::vector<int32_t>> ids = (*again)->Tokenize(kSamples[i]);
    FUZZ_CHECK(ids.ok() && *ids == before[i]);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view file = neodb::fuzz::AsView(data + 1, size - 1);
  switch (data[0] % 4) {
    case 0: {
      auto t = neodb::encoder::WordPieceTokenizer::FromVocabText(file, {}, "vocab.txt");
      if (t.ok()) CheckLoaded(**t, "wordpiece");
      break;
    }
    case 1: {
      auto t = neodb::encoder::WordPieceFromTokenizerJson(file, {}, "tokenizer.json");
      if (t.ok()) CheckLoaded(**t, "wordpiece");
      break;
    }
    case 2: {
      auto overrides = neodb::encoder::ParseTokenizerConfig(file, "tokenizer_config.json");
      if (overrides.ok()) {
        neodb::encoder::WordPieceOptions options;
        overrides->ApplyTo(&options);
        FUZZ_CHECK(options.max_input_chars_per_word >= 1);
      }
      break;
    }
    default: {
      auto t = neodb::encoder::SentencePieceTokenizer::FromSerializedProto(file, "x.model");
      if (t.ok()) CheckLoaded(**t, "sentencepiece");
      break;
    }
  }
  return 0;
}
