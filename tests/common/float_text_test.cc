// AppendFloatJson: every finite float prints in at most 9 significant digits
// and reads back to the same float, whatever value the encoder produced — in
// particular for the values a double-taking JSON writer prints long.
#include "common/float_text.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "nlohmann/json.hpp"

namespace neodb {
namespace {

int SignificantDigits(const std::string& text) {
  std::string digits;
  for (char c : text.substr(0, text.find_first_of("eE"))) {
    if (c >= '0' && c <= '9') digits += c;
  }
  digits.erase(0, digits.find_first_not_of('0'));
  return static_cast<int>(digits.size());
}

std::string Print(float v) {
  std::string out;
  AppendFloatJson(&out, v);
  return out;
}

void ExpectShortAndExact(float v) {
  const std::string text = Print(v);
  ASSERT_LE(SignificantDigits(text), 9) << text;
  ASSERT_EQ(std::strtof(text.c_str(), nullptr), v) << text;
}

std::vector<float> LongFixture() {
  const char* src = std::getenv("NEODB_SOURCE_DIR");
  const std::string path = std::string(src ? src : ".") +
                           "/tests/testdata/float_text/grisu2_long_floats.txt";
  std::ifstream in(path);
  std::vector<float> values;
  std::string line;
  while (std::getline(in, line)) values.push_back(std::strtof(line.c_str(), nullptr));
  return values;
}

// The fixture (research/reference/find_grisu2_long_floats.cc) holds values that
// the old printer — shortest decimal, read as double, printed by nlohmann —
// wrote with more than 9 digits. Checking that here keeps the fixture honest.
TEST(FloatText, FixtureValuesPrintLongThroughADouble) {
  const std::vector<float> values = LongFixture();
  ASSERT_EQ(values.size(), 200u);
  for (float v : values) {
    const std::string shortest = Print(v);
    const std::string via_double = nlohmann::json(std::strtod(shortest.c_str(), nullptr)).dump();
    EXPECT_GT(SignificantDigits(via_double), 9) << shortest << " -> " << via_double;
  }
}

TEST(FloatText, FixtureValuesPrintShortAndExact) {
  for (float v : LongFixture()) ExpectShortAndExact(v);
}

// Random bit patterns cover every exponent, subnormals and both signs.
TEST(FloatText, RandomBitPatternsPrintShortAndExact) {
  std::mt19937 rng(7);
  for (int i = 0; i < 1'000'000; ++i) {
    const uint32_t bits = rng();
    float v;
    std::memcpy(&v, &bits, sizeof(v));
    if (!std::isfinite(v)) continue;
    ExpectShortAndExact(v);
  }
}

TEST(FloatText, EdgeValues) {
  for (float v : {0.0f, -0.0f, 1.0f, -1.0f, 16777216.0f, 3.4028235e38f, -3.4028235e38f,
                  1.17549435e-38f, 1e-45f, 0.1f, -0.1708176f}) {
    ExpectShortAndExact(v);
  }
  EXPECT_EQ(Print(-0.1708176f), "-0.1708176");
}

TEST(FloatText, ArrayIsJsonAndNonFiniteIsNull) {
  const std::vector<float> values = {0.5f, -0.1708176f, NAN, INFINITY, 1e-7f};
  std::string out;
  AppendFloatJsonArray(&out, values);
  EXPECT_EQ(out, "[0.5,-0.1708176,null,null,1e-07]");
  const auto parsed = nlohmann::json::parse(out);
  ASSERT_EQ(parsed.size(), values.size());
  EXPECT_EQ(parsed[0].get<float>(), 0.5f);
  EXPECT_EQ(parsed[1].get<float>(), -0.1708176f);
  EXPECT_TRUE(parsed[2].is_null());
  EXPECT_EQ(parsed[4].get<float>(), 1e-7f);
  std::string empty;
  AppendFloatJsonArray(&empty, {});
  EXPECT_EQ(empty, "[]");
}

}  // namespace
}  // namespace neodb
