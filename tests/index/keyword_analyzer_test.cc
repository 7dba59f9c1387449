// Analyzer tests: golden outputs (tests/testdata/keyword/analyzer_golden.txt)
// for hand-written hostile cases, a sample of every Unicode general category
// and a 100 KB token, for all three analyzer kinds; properties that must hold
// for any input (valid UTF-8 out, bounded terms); and the name codec.
// NEODB_UPDATE_GOLDEN=1 rewrites the golden file instead of comparing (review
// the diff before committing it).
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "index/keyword/analyzer.h"
#include "index/keyword/analyzer_kind.h"
#include "index/keyword/unicode_text.h"
#include "utf8proc.h"

namespace neodb::keyword {
namespace {

std::string SourceDir() {
  const char* dir = std::getenv("NEODB_SOURCE_DIR");
  return dir ? dir : ".";
}

// UTF-8 of any value up to 0x10FFFF, surrogates included (they make invalid
// UTF-8, which is what a surrogate case should feed the analyzer).
std::string Encode(uint32_t c) {
  std::string s;
  if (c < 0x80) {
    s += static_cast<char>(c);
  } else if (c < 0x800) {
    s += static_cast<char>(0xC0 | (c >> 6));
    s += static_cast<char>(0x80 | (c & 0x3F));
  } else if (c < 0x10000) {
    s += static_cast<char>(0xE0 | (c >> 12));
    s += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    s += static_cast<char>(0x80 | (c & 0x3F));
  } else {
    s += static_cast<char>(0xF0 | (c >> 18));
    s += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
    s += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    s += static_cast<char>(0x80 | (c & 0x3F));
  }
  return s;
}

std::string Unescape(const std::string& in) {
  std::string out;
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i] != '\\' || i + 1 >= in.size()) {
      out += in[i];
      continue;
    }
    char e = in[++i];
    if (e == 'x') {
      out += static_cast<char>(std::stoi(in.substr(i + 1, 2), nullptr, 16));
      i += 2;
    } else if (e == 'u') {
      size_t close = in.find('}', i);
      out +=
          Encode(static_cast<uint32_t>(std::stoul(in.substr(i + 2, close - i - 2), nullptr, 16)));
      i = close;
    } else if (e == 't') {
      out += '\t';
    } else {
      out += e;
    }
  }
  return out;
}

struct Case {
  std::string name;
  std::string text;
};

std::vector<Case> HandWrittenCases() {
  std::ifstream in(SourceDir() + "/tests/testdata/keyword/analyzer_cases.txt");
  EXPECT_TRUE(in.good()) << "analyzer_cases.txt not found (NEODB_SOURCE_DIR?)";
  std::vector<Case> cases;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    size_t tab = line.find('\t');
    EXPECT_NE(tab, std::string::npos) << line;
    if (tab == std::string::npos) continue;
    cases.push_back({line.substr(0, tab), Unescape(line.substr(tab + 1))});
  }
  return cases;
}

// For each general category, 6 code points spread over the category, each
// shown three ways: inside a word, between spaces, and doubled.
std::vector<Case> CategoryCases() {
  std::vector<std::vector<uint32_t>> by_category(UTF8PROC_CATEGORY_CO + 1);
  for (uint32_t c = 0; c <= 0x10FFFF; ++c) {
    by_category[utf8proc_category(static_cast<utf8proc_int32_t>(c))].push_back(c);
  }
  std::vector<Case> cases;
  for (size_t cat = 0; cat < by_category.size(); ++cat) {
    const auto& all = by_category[cat];
    std::string text;
    for (size_t j = 0; j < 6 && !all.empty(); ++j) {
      const std::string c = Encode(all[j * all.size() / 6]);
      text += "a" + c + "b " + c + " " + c + c + "9 ";
    }
    cases.push_back(
        {std::string("category_") +
             utf8proc_category_string(static_cast<utf8proc_int32_t>(all.empty() ? 0x378 : all[0])),
         text});
  }
  return cases;
}

std::vector<Case> AllCases() {
  std::vector<Case> cases = HandWrittenCases();
  for (Case& c : CategoryCases()) cases.push_back(std::move(c));
  cases.push_back({"token_100kb_ascii", "before " + std::string(100 * 1024, 'x') + " after"});
  std::string greek;
  while (greek.size() < 100 * 1024) greek += "αβγ";
  cases.push_back({"token_100kb_greek", "before " + greek + " after"});
  std::string compound;
  while (compound.size() < 100 * 1024) compound += "ab-";
  cases.push_back({"compound_100kb", compound + "end"});
  return cases;
}

std::string Render(const std::vector<Token>& tokens) {
  std::string out;
  for (const Token& t : tokens) {
    if (!out.empty()) out += ' ';
    if (t.overlap) out += '+';
    out += t.term;
  }
  return out;
}

bool IsValidUtf8(const std::string& s) {
  const auto* p = reinterpret_cast<const utf8proc_uint8_t*>(s.data());
  for (size_t i = 0; i < s.size();) {
    utf8proc_int32_t c;
    utf8proc_ssize_t n = utf8proc_iterate(p + i, static_cast<utf8proc_ssize_t>(s.size() - i), &c);
    if (n <= 0) return false;
    i += static_cast<size_t>(n);
  }
  return true;
}

TEST(AnalyzerGoldenTest, MatchesGoldenFile) {
  const std::string golden_path = SourceDir() + "/tests/testdata/keyword/analyzer_golden.txt";
  std::ostringstream actual;
  actual << "# name<TAB>analyzer<TAB>tokens (space-separated; '+' marks an overlap token)\n";
  for (const Case& c : AllCases()) {
    for (AnalyzerKind kind : {AnalyzerKind::kEnglish, AnalyzerKind::kSimple, AnalyzerKind::kNone}) {
      actual << c.name << '\t' << AnalyzerKindName(kind) << '\t'
             << Render(Analyzer(kind).Analyze(c.text)) << '\n';
    }
  }
  if (std::getenv("NEODB_UPDATE_GOLDEN")) {
    std::ofstream(golden_path) << actual.str();
    GTEST_SKIP() << "wrote " << golden_path;
  }
  std::ifstream in(golden_path);
  ASSERT_TRUE(in.good()) << golden_path;
  std::stringstream expected;
  expected << in.rdbuf();
  std::istringstream a(actual.str()), e(expected.str());
  std::string al, el;
  int line = 0;
  while (true) {
    bool more_a = static_cast<bool>(std::getline(a, al));
    bool more_e = static_cast<bool>(std::getline(e, el));
    ++line;
    ASSERT_EQ(more_a, more_e) << "line count differs at line " << line;
    if (!more_a) break;
    EXPECT_EQ(al, el) << "golden line " << line;
  }
}

TEST(AnalyzerTest, EveryOutputIsValidAndBounded) {
  for (const Case& c : AllCases()) {
    for (AnalyzerKind kind : {AnalyzerKind::kEnglish, AnalyzerKind::kSimple, AnalyzerKind::kNone}) {
      for (const Token& t : Analyzer(kind).Analyze(c.text)) {
        EXPECT_FALSE(t.term.empty()) << c.name;
        EXPECT_LE(t.term.size(), kMaxTermBytes) << c.name;
        EXPECT_TRUE(IsValidUtf8(t.term)) << c.name;
      }
    }
  }
}

TEST(AnalyzerTest, RandomBytesNeverBreakIt) {
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> byte(0, 255), len(0, 300);
  for (int i = 0; i < 3000; ++i) {
    std::string s(len(rng), '\0');
    for (char& ch : s) ch = static_cast<char>(byte(rng));
    for (AnalyzerKind kind : {AnalyzerKind::kEnglish, AnalyzerKind::kSimple, AnalyzerKind::kNone}) {
      for (const Token& t : Analyzer(kind).Analyze(s)) {
        ASSERT_FALSE(t.term.empty());
        ASSERT_LE(t.term.size(), kMaxTermBytes);
        ASSERT_TRUE(IsValidUtf8(t.term));
      }
    }
  }
}

TEST(AnalyzerTest, HyphenatedCompoundsMatchEveryWayOfWritingThem) {
  Analyzer english(AnalyzerKind::kEnglish);
  EXPECT_EQ(Render(english.Analyze("COVID-19")), "covid 19 +covid19");
  EXPECT_EQ(Render(english.Analyze("covid19")), "covid19");
  EXPECT_EQ(Render(english.Analyze("state-of-the-art")), "state art +stateoftheart");
  // Overlap tokens do not count in the length.
  EXPECT_EQ(CountedLength(english.Analyze("COVID-19 vaccine")), 3u);
}

TEST(AnalyzerTest, EnglishFoldsStopsAndStems) {
  EXPECT_EQ(Render(Analyzer(AnalyzerKind::kEnglish).Analyze("The Running of the Dogs")), "run dog");
  EXPECT_EQ(Render(Analyzer(AnalyzerKind::kSimple).Analyze("The Running of the Dogs")),
            "the running of the dogs");
  EXPECT_EQ(Render(Analyzer(AnalyzerKind::kNone).Analyze("The Running of the Dogs")),
            "The Running of the Dogs");
}

TEST(AnalyzerTest, LongTokenKeepsAPrefixOfWholeCodePoints) {
  std::string greek;
  for (int i = 0; i < 50000; ++i) greek += "β";
  std::vector<Token> tokens = Analyzer(AnalyzerKind::kSimple).Analyze("a " + greek + " z");
  ASSERT_EQ(tokens.size(), 3u);
  EXPECT_EQ(tokens[1].term, greek.substr(0, kMaxTermBytes));  // 2-byte chars: 128 fits exactly
  EXPECT_EQ(tokens[2].term, "z");
}

TEST(UnicodeTextTest, AsciiFastPathsAgreeWithUtf8proc) {
  std::string ascii;
  for (int c = 0; c < 128; ++c) ascii += static_cast<char>(c);
  utf8proc_uint8_t* mapped = nullptr;
  utf8proc_ssize_t n = utf8proc_map(
      reinterpret_cast<const utf8proc_uint8_t*>(ascii.data()),
      static_cast<utf8proc_ssize_t>(ascii.size()), &mapped,
      static_cast<utf8proc_option_t>(UTF8PROC_STABLE | UTF8PROC_COMPAT | UTF8PROC_COMPOSE |
                                     UTF8PROC_CASEFOLD | UTF8PROC_IGNORE));
  ASSERT_GE(n, 0);
  EXPECT_EQ(NormalizeNfkcCasefold(ascii), std::string(reinterpret_cast<char*>(mapped), n));
  std::free(mapped);
  for (char32_t c = 0; c < 128; ++c) {
    const auto cat = utf8proc_category(static_cast<utf8proc_int32_t>(c));
    const CharClass cls = Classify(c);
    if (cat >= UTF8PROC_CATEGORY_LU && cat <= UTF8PROC_CATEGORY_LO)
      EXPECT_EQ(cls, CharClass::kLetter);
    if (cat == UTF8PROC_CATEGORY_ND) EXPECT_EQ(cls, CharClass::kDigit);
    if (cat == UTF8PROC_CATEGORY_PD || cat == UTF8PROC_CATEGORY_PC)
      EXPECT_EQ(cls, CharClass::kJoiner);
  }
}

TEST(AnalyzerKindTest, NamesRoundTrip) {
  for (AnalyzerKind kind : {AnalyzerKind::kEnglish, AnalyzerKind::kSimple, AnalyzerKind::kNone}) {
    auto parsed = ParseAnalyzerKind(AnalyzerKindName(kind));
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(*parsed, kind);
  }
  EXPECT_EQ(ParseAnalyzerKind("English").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseAnalyzerKind("").status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace neodb::keyword
