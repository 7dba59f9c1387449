#include "api/engine/fake_embedder.h"

#include <cctype>
#include <cmath>
#include <thread>

#include "absl/strings/str_cat.h"

namespace neodb::engine {
namespace {

uint64_t Mix(uint64_t x) {  // splitmix64
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

uint64_t HashWord(std::string_view w, uint64_t seed) {
  uint64_t h = 1469598103934665603ULL ^ seed;
  for (unsigned char c : w) h = (h ^ c) * 1099511628211ULL;
  return Mix(h);
}

std::vector<std::string_view> Words(std::string_view s) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
    size_t j = i;
    while (j < s.size() && !std::isspace(static_cast<unsigned char>(s[j]))) ++j;
    if (j > i) out.push_back(s.substr(i, j - i));
    i = j;
  }
  return out;
}

}  // namespace

FakeEmbedder::FakeEmbedder(int dim, int max_tokens, uint64_t seed)
    : dim_(dim),
      max_tokens_(max_tokens),
      seed_(seed),
      model_id_(absl::StrCat("fake-", dim, "-", seed)) {}

absl::StatusOr<int> FakeEmbedder::CountTokens(std::string_view prefix,
                                              std::string_view text) const {
  return static_cast<int>(Words(prefix).size() + Words(text).size()) + 2;
}

absl::StatusOr<std::vector<encoder::Embedding>> FakeEmbedder::Embed(
    const std::vector<std::string>& texts, const encoder::EmbedOptions& options) {
  ++calls_;
  if (int64_t d = delay_ns_.load(); d > 0) std::this_thread::sleep_for(std::chrono::nanoseconds(d));
  std::vector<encoder::Embedding> out;
  out.reserve(texts.size());
  for (const std::string& text : texts) {
    std::vector<std::string_view> words = Words(options.prefix);
    for (std::string_view w : Words(text)) words.push_back(w);
    int tokens = static_cast<int>(words.size()) + 2;
    int chunks = 1;
    if (tokens > max_tokens_) {
      if (options.overflow == encoder::Overflow::kError) {
        return absl::InvalidArgumentError(absl::StrCat(
            "text has ", tokens, " tokens, over the model's maximum of ", max_tokens_));
      }
      chunks = (tokens - 2 + max_tokens_ - 3) / (max_tokens_ - 2);
    }
    encoder::Embedding e;
    e.vector.assign(dim_, 0.0f);
    for (std::string_view w : words) {
      uint64_t h = HashWord(w, seed_);
      for (int i = 0; i < dim_; ++i) {
        h = Mix(h);
        e.vector[i] += static_cast<float>(static_cast<double>(h >> 11) / 9007199254740992.0 - 0.5);
      }
    }
    if (options.pooling == encoder::Pooling::kCls) e.vector[0] += 1.0f;
    if (options.normalize) {
      double n = 0;
      for (float v : e.vector) n += double(v) * v;
      n = std::sqrt(n);
      if (n > 0)
        for (float& v : e.vector) v = static_cast<float>(v / n);
    }
    e.num_tokens = tokens;
    e.num_chunks = chunks;
    out.push_back(std::move(e));
  }
  return out;
}

}  // namespace neodb::engine
