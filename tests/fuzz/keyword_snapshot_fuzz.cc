// Fuzzes KeywordIndex::Load, the keyword snapshot reader. First byte even:
// the rest is a whole file. Odd: the rest is the header's fields after the
// magic (version, analyzer, k1, b, covered_seq, documents, terms, postings:
// 53 bytes) followed by a payload, and this target writes the payload size
// and both checksums, so that mutations reach the payload parser that random
// corruption never passes. Oracle (keyword_index.h): a loaded index answers
// searches, and saving it loads back to the same content (Digest).
#include <cstring>
#include <string>

#include "common/byte_codec.h"
#include "index/keyword/keyword_index.h"
#include "index/keyword/keyword_snapshot.h"
#include "tests/fuzz/fuzz_util.h"

using neodb::keyword::KeywordIndex;

namespace {

constexpr size_t kHeaderFields = 4 + 1 + 8 + 8 + 8 * 4;

void AppendU64(std::string* out, uint64_t v) { out->append(reinterpret_cast<char*>(&v), 8); }

// A file whose checksums and payload size match its content.
std::string Checksummed(std::string_view fields, std::string_view payload) {
  std::string header(fields);
  AppendU64(&header, payload.size());
  AppendU64(&header, neodb::Checksum64(payload));
  AppendU64(&header, neodb::Checksum64(header));
  return std::string(neodb::keyword::kKeywordSnapshotMagic, 8) + header + std::string(payload);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  std::string_view rest = neodb::fuzz::AsView(data + 1, size - 1);
  std::string file;
  if ((data[0] & 1) == 0) {
    file = std::string(rest);
  } else {
    if (rest.size() < kHeaderFields) return 0;
    file = Checksummed(rest.substr(0, kHeaderFields), rest.substr(kHeaderFields));
  }
  const std::string path = neodb::fuzz::WriteScratchFile("keyword.snap", file);
  absl::StatusOr<KeywordIndex::Loaded> loaded = KeywordIndex::Load(path);
  if (!loaded.ok()) {
    FUZZ_CHECK(loaded.status().code() == absl::StatusCode::kDataLoss);
    return 0;
  }
  const KeywordIndex& index = *loaded->index;
  for (std::string_view query : {"the quick brown fox", "a", "caf\xc3\xa9 \xe4\xb8\xad"}) {
    auto hits = index.Search(query, 10);
    FUZZ_CHECK(hits.ok());
  }
  for (const std::string& term : index.Terms()) (void)index.Postings(term);
  const std::string copy = neodb::fuzz::ScratchDir() + "/keyword_copy.snap";
  FUZZ_CHECK(index.Save(copy, loaded->covered_seq).ok());
  absl::StatusOr<KeywordIndex::Loaded> again = KeywordIndex::Load(copy);
  FUZZ_CHECK(again.ok());
  FUZZ_CHECK(again->index->Digest() == index.Digest());
  FUZZ_CHECK(again->covered_seq == loaded->covered_seq);
  return 0;
}
