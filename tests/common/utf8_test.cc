// The one UTF-8 codec (common/utf8.h): every scalar value round-trips; each
// kind of ill-formed sequence is found at its offset and replaced byte by
// byte; strict and lossy reads agree on valid text.
#include "common/utf8.h"

#include <cstdint>
#include <string>

#include "gtest/gtest.h"

namespace neodb::utf8 {
namespace {

constexpr size_t npos = std::string_view::npos;

TEST(Utf8Test, EveryScalarValueRoundTrips) {
  for (char32_t cp = 0; cp <= 0x10FFFF; ++cp) {
    if (cp >= 0xD800 && cp <= 0xDFFF) continue;
    std::string s;
    AppendUtf8(cp, &s);
    const size_t want = cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
    ASSERT_EQ(s.size(), want) << static_cast<uint32_t>(cp);
    ASSERT_EQ(FindInvalidUtf8(s), npos) << static_cast<uint32_t>(cp);
    size_t pos = 0;
    ASSERT_EQ(DecodeAt(s, &pos), cp);
    ASSERT_EQ(pos, s.size());
    ASSERT_EQ(DecodeUtf8(s), std::u32string(1, cp));
    ASSERT_EQ(SanitizeUtf8(s), s);
  }
}

TEST(Utf8Test, IllFormedSequencesAreFoundWhereTheyStart) {
  struct Case {
    std::string text;
    size_t at;
  };
  const Case cases[] = {
      {"ok", npos},
      {"a\x80", 1},                  // stray continuation byte
      {"\xc0\xaf", 0},               // overlong '/' (2 bytes)
      {"\xc1\xbf", 0},               // overlong (2 bytes)
      {"ab\xe0\x80\xaf", 2},         // overlong (3 bytes)
      {"\xf0\x80\x80\xaf", 0},       // overlong (4 bytes)
      {"x\xed\xa0\x80", 1},          // surrogate U+D800
      {"\xed\xbf\xbf", 0},           // surrogate U+DFFF
      {"\xf4\x90\x80\x80", 0},       // U+110000
      {"\xf5\x80\x80\x80", 0},       // bad lead byte
      {"\xff", 0},                   // bad lead byte
      {"abc\xe2\x82", 3},            // truncated
      {"\xe2\x28\xa1", 0},           // bad continuation
      {"\xed\x9f\xbf\xee\x80\x80", npos},  // U+D7FF, U+E000: valid around the gap
      {"\xf4\x8f\xbf\xbf", npos},    // U+10FFFF
  };
  for (const Case& c : cases) EXPECT_EQ(FindInvalidUtf8(c.text), c.at) << c.text;
}

TEST(Utf8Test, LossyReadsReplaceEachOffendingByte) {
  const std::string bad = "a\xed\xa0\x80z\xe2\x82";  // surrogate (3 bytes), truncated (2)
  EXPECT_EQ(SanitizeUtf8(bad), "a\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbdz\xef\xbf\xbd\xef\xbf\xbd");
  EXPECT_EQ(DecodeUtf8(bad), (std::u32string{U'a', kReplacement, kReplacement, kReplacement, U'z',
                                             kReplacement, kReplacement}));
  EXPECT_EQ(FindInvalidUtf8(SanitizeUtf8(bad)), npos);
  const std::string mixed = "caf\xc3\xa9 \xe6\x97\xa5\xf0\x9f\x98\x80";
  EXPECT_EQ(SanitizeUtf8(mixed), mixed);
  EXPECT_EQ(DecodeUtf8(mixed), U"café 日😀");
}

}  // namespace
}  // namespace neodb::utf8
