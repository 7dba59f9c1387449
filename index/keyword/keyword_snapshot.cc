// KeywordIndex::Save, Load and Digest: the snapshot format of keyword_snapshot.h.
#include "index/keyword/keyword_snapshot.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "absl/strings/str_cat.h"
#include "common/atomic_file.h"
#include "common/byte_codec.h"
#include "common/status_macros.h"
#include "index/keyword/keyword_index.h"

namespace neodb::keyword {
namespace {

struct Header {
  uint32_t version = kKeywordSnapshotVersion;
  uint8_t analyzer = 0;
  double k1 = 0;
  double b = 0;
  uint64_t covered_seq = 0;
  uint64_t documents = 0;
  uint64_t terms = 0;
  uint64_t postings = 0;
  uint64_t payload_bytes = 0;
  uint64_t payload_checksum = 0;
};

std::string EncodeHeader(const Header& h) {
  ByteWriter w;
  w.Raw(kKeywordSnapshotMagic, 8);
  w.U32(h.version);
  w.U8(h.analyzer);
  w.F64(h.k1);
  w.F64(h.b);
  w.U64(h.covered_seq);
  w.U64(h.documents);
  w.U64(h.terms);
  w.U64(h.postings);
  w.U64(h.payload_bytes);
  w.U64(h.payload_checksum);
  w.U64(Checksum64(std::string_view(w.out()).substr(8)));
  return std::move(w.out());
}

absl::Status Corrupt(const std::string& path, std::string_view why) {
  return absl::DataLossError(absl::StrCat("keyword snapshot ", path, ": ", std::string(why)));
}

}  // namespace

std::string KeywordIndex::CanonicalPayloadLocked() const {
  // Live term ids in term order, and each one's index in that order.
  std::vector<uint32_t> order;
  order.reserve(term_ids_.size());
  for (const auto& [term, id] : term_ids_) order.push_back(id);
  std::sort(order.begin(), order.end(),
            [&](uint32_t a, uint32_t b) { return term_text_[a] < term_text_[b]; });
  std::vector<uint32_t> index_of(term_text_.size(), 0);
  for (uint32_t i = 0; i < order.size(); ++i) index_of[order[i]] = i;

  std::vector<std::pair<uint64_t, uint32_t>> docs(slot_of_.begin(), slot_of_.end());
  std::sort(docs.begin(), docs.end());

  ByteWriter w;
  w.U64(order.size());
  for (uint32_t id : order) w.Str(term_text_[id]);
  w.U64(docs.size());
  std::vector<std::pair<uint32_t, float>> terms;
  for (const auto& [id, slot] : docs) {
    w.U64(id);
    w.F32(length_[slot]);
    terms.clear();
    for (const TermFreq& tf : forward_[slot]) terms.emplace_back(index_of[tf.term], tf.tf);
    std::sort(terms.begin(), terms.end());
    w.U32(static_cast<uint32_t>(terms.size()));
    for (const auto& [index, tf] : terms) {
      w.U32(index);
      w.F32(tf);
    }
  }
  return std::move(w.out());
}

uint64_t KeywordIndex::Digest() const {
  absl::ReaderMutexLock lock(&mu_);
  return Checksum64(CanonicalPayloadLocked());
}

absl::Status KeywordIndex::Save(const std::string& path, uint64_t covered_seq, Env* env) const {
  std::string payload;
  Header h;
  {
    absl::ReaderMutexLock lock(&mu_);
    payload = CanonicalPayloadLocked();
    h.documents = slot_of_.size();
    h.terms = term_ids_.size();
    h.postings = postings_count_;
  }
  h.analyzer = static_cast<uint8_t>(options_.analyzer);
  h.k1 = options_.k1;
  h.b = options_.b;
  h.covered_seq = covered_seq;
  h.payload_bytes = payload.size();
  h.payload_checksum = Checksum64(payload);
  return WriteFileAtomically(env, path, {EncodeHeader(h), payload});
}

absl::StatusOr<KeywordIndex::Loaded> KeywordIndex::Load(const std::string& path, Env* env) {
  ASSIGN_OR_RETURN(std::string bytes, ReadFileToString(env, path));
  ByteReader r(bytes);
  char magic[8];
  if (!r.Raw(magic, 8) ||
      std::string_view(magic, 8) != std::string_view(kKeywordSnapshotMagic, 8)) {
    return Corrupt(path, "bad magic (not a keyword snapshot)");
  }
  Header h;
  uint64_t header_checksum;
  if (!r.U32(&h.version) || !r.U8(&h.analyzer) || !r.F64(&h.k1) || !r.F64(&h.b) ||
      !r.U64(&h.covered_seq) || !r.U64(&h.documents) || !r.U64(&h.terms) || !r.U64(&h.postings) ||
      !r.U64(&h.payload_bytes) || !r.U64(&h.payload_checksum)) {
    return Corrupt(path, "truncated header");
  }
  const size_t header_end = bytes.size() - r.remaining();
  if (!r.U64(&header_checksum) ||
      header_checksum != Checksum64(std::string_view(bytes).substr(8, header_end - 8))) {
    return Corrupt(path, "header checksum mismatch");
  }
  if (h.version != kKeywordSnapshotVersion) {
    return Corrupt(path, absl::StrCat("unsupported format version ", h.version));
  }
  if (h.analyzer > static_cast<uint8_t>(AnalyzerKind::kNone)) return Corrupt(path, "bad analyzer");
  std::string_view payload = r.rest();
  if (payload.size() != h.payload_bytes) {
    return Corrupt(path, absl::StrCat("payload is ", payload.size(), " bytes, header says ",
                                      h.payload_bytes, " (truncated?)"));
  }
  if (Checksum64(payload) != h.payload_checksum) return Corrupt(path, "payload checksum mismatch");

  KeywordOptions options{static_cast<AnalyzerKind>(h.analyzer), h.k1, h.b};
  absl::StatusOr<std::unique_ptr<KeywordIndex>> index = Create(options);
  if (!index.ok()) return Corrupt(path, std::string(index.status().message()));
  absl::Status loaded = (*index)->LoadPayload(payload);
  if (!loaded.ok()) return Corrupt(path, std::string(loaded.message()));
  KeywordStats stats = (*index)->Stats();
  if (stats.documents != h.documents || stats.terms != h.terms || stats.postings != h.postings) {
    return Corrupt(path, "content does not match the header's counts");
  }
  return Loaded{std::move(*index), h.covered_seq};
}

absl::Status KeywordIndex::LoadPayload(std::string_view payload) {
  absl::MutexLock lock(&mu_);
  ByteReader r(payload);
  uint64_t term_count;
  // Each term takes at least 9 bytes (length + one byte): bounds the reserve.
  if (!r.U64(&term_count) || term_count > r.remaining() / 9)
    return absl::DataLossError("bad term count");
  term_text_.reserve(term_count);
  for (uint64_t i = 0; i < term_count; ++i) {
    std::string term;
    if (!r.Str(&term)) return absl::DataLossError("truncated term dictionary");
    if (term.empty()) return absl::DataLossError("empty term");
    if (i > 0 && !(term_text_.back() < term)) return absl::DataLossError("terms out of order");
    term_ids_.emplace(term, static_cast<uint32_t>(i));
    term_text_.push_back(std::move(term));
  }
  postings_.resize(term_count);
  uint64_t doc_count;
  // Each document takes at least 16 bytes.
  if (!r.U64(&doc_count) || doc_count > r.remaining() / 16)
    return absl::DataLossError("bad document count");
  for (uint64_t d = 0; d < doc_count; ++d) {
    uint64_t id = 0;
    float length = 0;
    uint32_t n = 0;
    if (!r.U64(&id) || !r.F32(&length) || !r.U32(&n))
      return absl::DataLossError("truncated document");
    if (d > 0 && !(id_of_slot_.back() < id)) return absl::DataLossError("documents out of order");
    if (!std::isfinite(length) || length < 0) return absl::DataLossError("bad document length");
    if (n > r.remaining() / 8) return absl::DataLossError("truncated document terms");
    const uint32_t slot = static_cast<uint32_t>(id_of_slot_.size());
    std::vector<TermFreq> forward;
    forward.reserve(n);
    for (uint32_t j = 0; j < n; ++j) {
      uint32_t term = 0;
      float tf = 0;
      r.U32(&term);  // n <= remaining / 8 was checked: both reads succeed
      r.F32(&tf);
      if (term >= term_count || (j > 0 && term <= forward.back().term)) {
        return absl::DataLossError("bad term index");
      }
      if (!std::isfinite(tf) || tf <= 0) return absl::DataLossError("bad term frequency");
      forward.push_back({term, tf});
      postings_[term].push_back({slot, tf});  // slots ascend: lists stay sorted
    }
    slot_of_[id] = slot;
    id_of_slot_.push_back(id);
    length_.push_back(length);
    total_length_ += length;
    postings_count_ += n;
    forward_.push_back(std::move(forward));
  }
  if (r.remaining() != 0) return absl::DataLossError("trailing bytes after the content");
  for (const auto& list : postings_) {
    if (list.empty()) return absl::DataLossError("a term without postings");
  }
  return absl::OkStatus();
}

}  // namespace neodb::keyword
