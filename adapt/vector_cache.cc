#include "adapt/vector_cache.h"

#include <bit>
#include <cmath>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/atomic_file.h"
#include "common/env.h"
#include "common/line_reader.h"
#include "nlohmann/json.hpp"
#include "xxhash.h"

namespace neodb::adapt {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

constexpr char kMagic[] = "neodb-doc-vectors 1";

static_assert(std::endian::native == std::endian::little,
              "the vector file is little-endian float32, written as the host holds it");

json KeyJson(const VectorCacheKey& k) {
  return {{"model_id", k.model_id},
          {"documents", k.documents},
          {"dim", k.dim},
          {"documents_hash", k.documents_hash},
          {"settings", k.settings}};
}

}  // namespace

std::string DocumentsHash(const CollectionDocs& docs) {
  XXH3_state_t* state = XXH3_createState();
  XXH3_64bits_reset(state);
  auto add = [&](const std::string& s) {
    const uint64_t n = s.size();
    XXH3_64bits_update(state, &n, sizeof n);
    XXH3_64bits_update(state, s.data(), s.size());
  };
  for (int64_t i = 0; i < docs.size(); ++i) {
    add(docs.ids[i]);
    add(docs.texts[i]);
  }
  const uint64_t h = XXH3_64bits_digest(state);
  XXH3_freeState(state);
  return absl::StrFormat("%016x", h);
}

std::string SettingsFingerprint(const EmbedSettings& s) {
  return json({{"pooling", static_cast<int>(s.pooling)},
               {"overflow", static_cast<int>(s.overflow)},
               {"document_prefix", s.document_prefix},
               {"precision", std::string(encoder::PrecisionName(s.precision))},
               {"metric", std::string(index::MetricName(s.metric))}})
      .dump();
}

absl::Status SaveDocVectors(const fs::path& path, const std::vector<float>& vectors,
                            const VectorCacheKey& key) {
  if (static_cast<int64_t>(vectors.size()) != key.documents * key.dim) {
    return absl::InternalError("document vectors do not match their key's shape");
  }
  const std::string header = absl::StrCat(kMagic, "\n", KeyJson(key).dump(), "\n");
  return WriteFileAtomically(
      Env::Default(), path.string(),
      {header, std::string_view(reinterpret_cast<const char*>(vectors.data()),
                                vectors.size() * sizeof(float))});
}

std::optional<std::vector<float>> LoadDocVectors(const fs::path& path, const VectorCacheKey& key,
                                                 std::string* why_not, Env* env) {
  if (!FileExists(env, path.string())) {
    *why_not = "no saved vectors";
    return std::nullopt;
  }
  absl::StatusOr<LineReader> in = LineReader::Open(env, path.string());
  if (!in.ok()) {
    *why_not = "cannot open it";
    return std::nullopt;
  }
  std::string magic, key_line;
  // Bounded reads: a hostile or foreign file must not make us swallow
  // gigabytes looking for a newline.
  auto read_line = [&in](std::string* line, size_t limit) {
    absl::StatusOr<bool> got = in->ReadLine(line, limit);
    return got.ok() && *got;
  };
  if (!read_line(&magic, sizeof kMagic) || magic != kMagic) {
    *why_not = "not a vector file";
    return std::nullopt;
  }
  if (!read_line(&key_line, 1 << 16)) {
    *why_not = "malformed header";
    return std::nullopt;
  }
  const json stored = json::parse(key_line, nullptr, /*allow_exceptions=*/false);
  if (stored.is_discarded()) {
    *why_not = "malformed header";
    return std::nullopt;
  }
  if (stored != KeyJson(key)) {
    *why_not = "saved for another model, other documents or other settings";
    return std::nullopt;
  }
  const uint64_t start = magic.size() + 1 + key_line.size() + 1;  // both lines and their '\n'
  const absl::StatusOr<uint64_t> size = env->GetFileSize(path.string());
  const uint64_t want = static_cast<uint64_t>(key.documents) * key.dim * sizeof(float);
  if (!size.ok() || *size < start || *size - start != want) {
    *why_not = "truncated or oversized";
    return std::nullopt;
  }
  std::vector<float> vectors(static_cast<size_t>(key.documents * key.dim));
  const absl::StatusOr<size_t> got = in->Read(want, reinterpret_cast<char*>(vectors.data()));
  if (!got.ok() || *got != want) {
    *why_not = "cannot read it";
    return std::nullopt;
  }
  for (float v : vectors) {
    if (!std::isfinite(v)) {
      *why_not = "holds a non-finite value";
      return std::nullopt;
    }
  }
  return vectors;
}

}  // namespace neodb::adapt
