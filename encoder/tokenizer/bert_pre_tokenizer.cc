#include "encoder/tokenizer/bert_pre_tokenizer.h"

#include "encoder/tokenizer/unicode_util.h"

namespace neodb::encoder {
namespace {

inline bool IsAsciiControl(char32_t cp) {
  return (cp < 0x20 && cp != '\t' && cp != '\n' && cp != '\r') || cp == 0x7F;
}
inline bool IsAsciiSpace(char32_t cp) {
  return cp == ' ' || cp == '\t' || cp == '\n' || cp == '\r';
}

}  // namespace

void BertPreTokenizer::Split(std::string_view text, Scratch* scratch,
                             absl::FunctionRef<void(std::string_view)> emit) const {
  std::vector<char32_t>& token = scratch->token;
  token.clear();
  bool ascii = true;
  auto flush = [&] {
    if (!token.empty()) SplitToken(scratch, ascii, emit);
    token.clear();
    ascii = true;
  };
  size_t pos = 0;
  while (pos < text.size()) {
    const auto byte = static_cast<unsigned char>(text[pos]);
    if (byte < 0x80) {
      ++pos;
      if (IsAsciiSpace(byte)) {
        flush();
      } else if (byte != 0 && !IsAsciiControl(byte)) {
        token.push_back(byte);
      }
      continue;
    }
    const char32_t cp = unicode::DecodeAt(text, &pos);
    if (cp == 0xFFFD || unicode::IsControl(cp)) continue;
    if (unicode::IsWhitespace(cp) || unicode::IsExtraSplitSpace(cp)) {
      flush();
    } else if (options_.tokenize_chinese_chars && unicode::IsChineseChar(cp)) {
      flush();
      token.push_back(cp);
      ascii = false;
      flush();
    } else {
      token.push_back(cp);
      ascii = false;
    }
  }
  flush();
}

void BertPreTokenizer::SplitToken(Scratch* scratch, bool ascii,
                                  absl::FunctionRef<void(std::string_view)> emit) const {
  std::string& word = scratch->word;
  word.clear();
  auto punct = [&](char32_t cp) {
    if (!word.empty()) emit(word);
    word.clear();
    unicode::AppendUtf8(cp, &word);
    emit(word);
    word.clear();
  };
  if (ascii) {
    for (char32_t cp : scratch->token) {
      if (unicode::IsPunctuation(cp)) {
        punct(cp);
        continue;
      }
      if (options_.lower_case && cp >= 'A' && cp <= 'Z') cp += 'a' - 'A';
      word.push_back(static_cast<char>(cp));
    }
    if (!word.empty()) emit(word);
    return;
  }
  std::vector<char32_t>* cps = &scratch->token;
  if (options_.lower_case) {
    scratch->tmp.clear();
    for (const char32_t cp : scratch->token) unicode::AppendLower(cp, &scratch->tmp);
    cps = &scratch->tmp;
  }
  if (options_.strip_accents) {
    unicode::ToNfd(cps, &scratch->tmp2);
  } else {
    unicode::ToNfc(cps, &scratch->tmp2);
  }
  for (const char32_t cp : *cps) {
    if (options_.strip_accents && unicode::IsNonspacingMark(cp)) continue;
    if (unicode::IsPunctuation(cp)) {
      punct(cp);
    } else {
      unicode::AppendUtf8(cp, &word);
    }
  }
  if (!word.empty()) emit(word);
}

}  // namespace neodb::encoder
