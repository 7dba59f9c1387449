#include "engine/fake_embedder.h"

#include <algorithm>
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

// Token ids: a 31-bit hash of the word (never negative), so a word's
// vector depends on the word alone; the specials are negative.
constexpr int32_t kCls = -1;
constexpr int32_t kSep = -2;
int32_t WordId(std::string_view w) { return static_cast<int32_t>(HashWord(w, 0) >> 33); }

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

absl::StatusOr<encoder::FramedTexts> FakeEmbedder::Frame(
    const std::vector<std::string>& texts, const encoder::EmbedOptions& options) const {
  std::vector<int32_t> prefix;
  for (std::string_view w : Words(options.prefix)) prefix.push_back(WordId(w));
  const int64_t window = max_tokens_ - 2 - static_cast<int64_t>(prefix.size());
  if (window < 1) return absl::InvalidArgumentError("prefix leaves no room for text");
  encoder::FramedTexts framed;
  framed.first_sequence.assign(texts.size() + 1, 0);
  for (size_t i = 0; i < texts.size(); ++i) {
    std::vector<int32_t> ids;
    for (std::string_view w : Words(texts[i])) ids.push_back(WordId(w));
    const int64_t n = static_cast<int64_t>(ids.size());
    if (n > window && options.overflow == encoder::Overflow::kError) {
      return absl::InvalidArgumentError(absl::StrCat("text has ", n + 2 + prefix.size(),
                                                     " tokens, over the model's maximum of ",
                                                     max_tokens_));
    }
    framed.first_sequence[i] = static_cast<int64_t>(framed.sequences.size());
    int64_t begin = 0;
    do {
      const int64_t end = std::min(n, begin + window);
      std::vector<int32_t> seq{kCls};
      seq.insert(seq.end(), prefix.begin(), prefix.end());
      seq.insert(seq.end(), ids.begin() + begin, ids.begin() + end);
      seq.push_back(kSep);
      framed.sequences.push_back(std::move(seq));
      begin = end;
    } while (begin < n);
    framed.first_sequence[i + 1] = static_cast<int64_t>(framed.sequences.size());
  }
  return framed;
}

absl::StatusOr<std::vector<float>> FakeEmbedder::Pool(
    const std::vector<std::vector<int32_t>>& sequences, encoder::Pooling pooling) {
  ++calls_;
  if (int64_t d = delay_ns_.load(); d > 0) std::this_thread::sleep_for(std::chrono::nanoseconds(d));
  std::vector<float> out(sequences.size() * dim_, 0.0f);
  for (size_t s = 0; s < sequences.size(); ++s) {
    float* v = out.data() + s * dim_;
    for (int32_t id : sequences[s]) {
      if (id < 0) continue;  // [CLS], [SEP]
      uint64_t h = Mix(static_cast<uint64_t>(id) ^ (seed_ * 0x9e3779b97f4a7c15ULL));
      for (int i = 0; i < dim_; ++i) {
        h = Mix(h);
        v[i] += static_cast<float>(static_cast<double>(h >> 11) / 9007199254740992.0 - 0.5);
      }
    }
    if (pooling == encoder::Pooling::kCls) v[0] += 1.0f;
  }
  return out;
}

absl::StatusOr<std::vector<encoder::Embedding>> FakeEmbedder::Embed(
    const std::vector<std::string>& texts, const encoder::EmbedOptions& options) {
  ASSIGN_OR_RETURN(encoder::FramedTexts framed, Frame(texts, options));
  ASSIGN_OR_RETURN(std::vector<float> pooled, Pool(framed.sequences, options.pooling));
  return encoder::CombineChunks(framed, pooled.data(), dim_, options.normalize);
}

}  // namespace neodb::engine
