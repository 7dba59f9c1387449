// Finds embedding-range floats that a JSON writer taking doubles prints long:
// the float's shortest decimal (std::to_chars), read back as a double and
// printed by nlohmann-json (Grisu2), comes out with more than 9 significant
// digits (-0.1708176 -> -0.17081760000000001). Their output is the fixture
// tests/testdata/float_text/grisu2_long_floats.txt that float_text_test feeds
// to our own printer (common/float_text.h). Deterministic (fixed seed).
//
//   g++ -O2 -std=c++20 research/reference/find_grisu2_long_floats.cc -o /tmp/find \
//     && /tmp/find 4000000 200 > tests/testdata/float_text/grisu2_long_floats.txt
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>

#include "nlohmann/json.hpp"

namespace {

int SignificantDigits(const std::string& text) {
  std::string digits;
  for (char c : text.substr(0, text.find_first_of("eE"))) {
    if (c >= '0' && c <= '9') digits += c;
  }
  digits.erase(0, digits.find_first_not_of('0'));
  return static_cast<int>(digits.size());
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s TRIES KEEP\n", argv[0]);
    return 2;
  }
  const long tries = std::atol(argv[1]);
  const long keep = std::atol(argv[2]);
  std::mt19937 rng(20261125);
  std::uniform_real_distribution<float> mantissa(0.5f, 1.0f);
  std::uniform_int_distribution<int> exponent(-13, 0);  // |v| in [2^-14, 1)
  long found = 0;
  for (long i = 0; i < tries && found < keep; ++i) {
    const float v = std::ldexp(mantissa(rng), exponent(rng)) * ((rng() & 1) ? -1.f : 1.f);
    char buf[32];
    const auto r = std::to_chars(buf, buf + sizeof(buf), v, std::chars_format::general);
    *r.ptr = '\0';
    const std::string via_double = nlohmann::json(std::strtod(buf, nullptr)).dump();
    if (SignificantDigits(via_double) > 9) {
      std::printf("%s\n", buf);
      ++found;
    }
  }
  std::fprintf(stderr, "%ld found\n", found);
  return 0;
}
