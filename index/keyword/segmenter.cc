#include "index/keyword/segmenter.h"

#include "index/keyword/unicode_text.h"

namespace neodb::keyword {
namespace {

bool StartsWord(CharClass c) { return c == CharClass::kLetter || c == CharClass::kDigit; }

// Appends `c` to `word` if it fits within max_term_bytes (always whole code
// points, so the result stays valid UTF-8).
void AppendCodePoint(char32_t c, size_t max_term_bytes, std::string* word) {
  std::string encoded;
  AppendUtf8(c, &encoded);
  if (word->size() + encoded.size() <= max_term_bytes) word->append(encoded);
}

class SegmenterState {
 public:
  SegmenterState(std::u32string_view text, size_t max_term_bytes)
      : text_(text), max_(max_term_bytes) {
    classes_.reserve(text.size());
    for (char32_t c : text) classes_.push_back(Classify(c));
  }

  std::vector<SegmentToken> Run() {
    size_t i = 0;
    while (i < text_.size()) {
      if (classes_[i] == CharClass::kIdeograph) {
        i = IdeographRun(i);
      } else if (StartsWord(classes_[i])) {
        i = Compound(i);
      } else {
        ++i;
      }
    }
    return std::move(out_);
  }

 private:
  CharClass ClassAt(size_t i) const {
    return i < classes_.size() ? classes_[i] : CharClass::kSeparator;
  }

  // Each ideograph, and each adjacent pair as an overlap token.
  size_t IdeographRun(size_t i) {
    std::string prev;
    while (i < text_.size() && classes_[i] == CharClass::kIdeograph) {
      std::string cur;
      AppendUtf8(text_[i], &cur);
      out_.push_back({cur, false});
      if (!prev.empty()) out_.push_back({prev + cur, true});
      prev = std::move(cur);
      ++i;
    }
    return i;
  }

  // One word starting at i (a letter or digit); returns the index after it.
  size_t Word(size_t i, std::string* word) {
    CharClass last = CharClass::kSeparator;  // last letter/digit class seen
    while (i < text_.size()) {
      const CharClass c = classes_[i];
      if (c == CharClass::kLetter || c == CharClass::kDigit) {
        AppendCodePoint(text_[i], max_, word);
        last = c;
      } else if (c == CharClass::kMark) {
        AppendCodePoint(text_[i], max_, word);
      } else if (c == CharClass::kIgnorable) {
        // skipped: a soft hyphen or joiner inside a word does not split it
      } else if (c == CharClass::kApostrophe && last == CharClass::kLetter &&
                 ClassAt(i + 1) == CharClass::kLetter) {
        AppendCodePoint('\'', max_, word);
      } else if (c == CharClass::kNumberSep && last == CharClass::kDigit &&
                 ClassAt(i + 1) == CharClass::kDigit) {
        AppendCodePoint(text_[i], max_, word);
      } else {
        break;
      }
      ++i;
    }
    return i;
  }

  // Words joined by single joiners; parts, then the joined form if > 1 part.
  size_t Compound(size_t i) {
    size_t parts = 0;
    std::string joined;
    while (true) {
      std::string word;
      i = Word(i, &word);
      AppendBounded(word, max_, &joined);
      out_.push_back({std::move(word), false});
      ++parts;
      if (ClassAt(i) == CharClass::kJoiner && StartsWord(ClassAt(i + 1))) {
        ++i;
        continue;
      }
      break;
    }
    if (parts > 1) out_.push_back({std::move(joined), true});
    return i;
  }

  std::u32string_view text_;
  size_t max_;
  std::vector<CharClass> classes_;
  std::vector<SegmentToken> out_;
};

}  // namespace

std::vector<SegmentToken> Segment(std::u32string_view text, size_t max_term_bytes) {
  return SegmenterState(text, max_term_bytes).Run();
}

}  // namespace neodb::keyword
