// Store: document writes and reads, listing, scans and the change log.
#include <cctype>
#include <cmath>
#include <unordered_map>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "db/codec.h"
#include "db/store.h"
#include "db/store_impl.h"

namespace neodb::db {
namespace {

constexpr size_t kDefaultListLimit = 100;
constexpr size_t kMaxListLimit = 10000;
constexpr char kPageTokenVersion = '1';

std::string DocKey(std::string_view collection, std::string_view id) {
  std::string k = CollectionPrefix(collection);
  k.append(id);
  return k;
}

std::string IdMapKey(std::string_view collection, uint64_t internal_id) {
  return CollectionPrefix(collection) + EncodeBigEndian64(internal_id);
}

// Reads only the internal id of the stored version of `key` (it is the
// second field of the encoding, so the vector is never decoded). 0 if absent.
absl::StatusOr<uint64_t> StoredInternalId(rocksdb::DB* db, rocksdb::ColumnFamilyHandle* cf,
                                          const std::string& key) {
  rocksdb::PinnableSlice value;
  rocksdb::Status s = db->Get(rocksdb::ReadOptions(), cf, key, &value);
  if (s.IsNotFound()) return 0;
  RETURN_IF_ERROR(FromRocks(s, "reading document"));
  // version byte, then a varint.
  uint64_t id = 0;
  if (value.size() < 2 || static_cast<uint8_t>(value.data()[0]) != 1) {
    return absl::DataLossError("corrupt document record: header");
  }
  for (size_t i = 1, shift = 0; i < value.size() && shift < 64; ++i, shift += 7) {
    uint8_t b = static_cast<uint8_t>(value.data()[i]);
    id |= static_cast<uint64_t>(b & 0x7f) << shift;
    if ((b & 0x80) == 0) {
      if (id == 0) return absl::DataLossError("corrupt document record: internal id 0");
      return id;
    }
  }
  return absl::DataLossError("corrupt document record: internal id");
}

absl::Status ValidateDocument(const Document& doc, uint32_t dimension, size_t index) {
  auto bad = [&](std::string_view what) {
    std::string who = doc.id.empty()
                          ? absl::StrCat("document ", index)
                          : absl::StrCat("document ", index, " ('", doc.id.substr(0, 64), "')");
    return absl::InvalidArgumentError(absl::StrCat(who, ": ", std::string(what)));
  };
  if (doc.id.empty()) return bad("id is empty");
  if (doc.id.size() > kMaxDocumentIdBytes) {
    return bad(absl::StrCat("id is longer than ", kMaxDocumentIdBytes, " bytes"));
  }
  if (doc.vector.size() != dimension) {
    return bad(absl::StrCat("vector has ", doc.vector.size(),
                            " values; the collection's dimension is ", dimension));
  }
  for (float v : doc.vector) {
    if (!std::isfinite(v)) return bad("vector contains a non-finite value");
  }
  if (auto s = ValidateMetadata(doc.metadata); !s.ok()) return bad(std::string(s.message()));
  return absl::OkStatus();
}

absl::Status CheckSource(const SourcePosition* from) {
  if (from == nullptr) return absl::OkStatus();
  if (from->source.empty() || from->source.size() > 256) {
    return absl::InvalidArgumentError("a source log's name must have 1 to 256 bytes");
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<uint64_t> Store::SourcePositionOf(std::string_view collection,
                                                 std::string_view source) const {
  RETURN_IF_ERROR(GetCollection(collection).status());
  std::shared_ptr<Rocks> r = impl_->current();
  std::string value;
  rocksdb::Status s = r->db->Get(rocksdb::ReadOptions(), r->meta,
                                     SourceKey(collection, source), &value);
  if (s.IsNotFound()) return 0;
  RETURN_IF_ERROR(FromRocks(s, "reading a source position"));
  return DecodeBigEndian64(value);
}

absl::StatusOr<std::vector<uint64_t>> Store::Upsert(std::string_view collection,
                                                    std::vector<Document> docs,
                                                    const SourcePosition* from) {
  Impl& im = *impl_;
  std::lock_guard<std::mutex> lock(im.write_mu);
  RETURN_IF_ERROR(im.ResumeIfStopped());
  std::shared_ptr<Rocks> r = im.current();
  ASSIGN_OR_RETURN(CollectionSpec spec, GetCollection(collection));
  RETURN_IF_ERROR(CheckSource(from));
  for (size_t i = 0; i < docs.size(); ++i) {
    RETURN_IF_ERROR(ValidateDocument(docs[i], spec.dimension, i));
  }
  ASSIGN_OR_RETURN(uint64_t count, Count(collection));
  uint64_t seq = im.last_seq;
  uint64_t next_id = im.next_internal_id;
  // Versions written earlier in this same batch (a repeated id overwrites them).
  std::unordered_map<std::string, uint64_t> in_batch;
  std::vector<uint64_t> seqs;
  seqs.reserve(docs.size());
  rocksdb::WriteBatch batch;
  for (Document& doc : docs) {
    std::string key = DocKey(collection, doc.id);
    uint64_t previous = 0;
    if (auto it = in_batch.find(doc.id); it != in_batch.end()) {
      previous = it->second;
    } else {
      ASSIGN_OR_RETURN(previous, StoredInternalId(r->db.get(), r->documents, key));
    }
    if (previous == 0) ++count;
    doc.internal_id = next_id++;
    in_batch[doc.id] = doc.internal_id;
    ChangelogRecord rec;
    rec.seq = ++seq;
    rec.op = ChangeOp::kUpsert;
    rec.collection = std::string(collection);
    rec.doc_id = doc.id;
    rec.internal_id = doc.internal_id;
    rec.previous_internal_id = previous;
    if (previous != 0) batch.Delete(r->id_map, IdMapKey(collection, previous));
    batch.Put(r->id_map, IdMapKey(collection, doc.internal_id), doc.id);
    batch.Put(r->documents, key, EncodeDocument(doc));
    batch.Put(r->changelog, EncodeBigEndian64(rec.seq), EncodeChangelogRecord(rec));
    seqs.push_back(rec.seq);
  }
  if (from) batch.Put(r->meta, SourceKey(collection, from->source), EncodeBigEndian64(from->position));
  if (docs.empty()) {
    if (from) RETURN_IF_ERROR(im.Commit(*r, &batch, "recording a source position"));
    return seqs;
  }
  batch.Put(r->meta, CountKey(collection), EncodeBigEndian64(count));
  batch.Put(r->meta, kLastSeqKey, EncodeBigEndian64(seq));
  batch.Put(r->meta, kNextInternalIdKey, EncodeBigEndian64(next_id));
  RETURN_IF_ERROR(im.Commit(*r, &batch, "writing documents"));
  im.next_internal_id = next_id;
  im.last_seq = seq;
  return seqs;
}

absl::StatusOr<std::vector<uint64_t>> Store::Delete(std::string_view collection,
                                                    std::span<const std::string> ids,
                                                    const SourcePosition* from) {
  Impl& im = *impl_;
  std::lock_guard<std::mutex> lock(im.write_mu);
  RETURN_IF_ERROR(im.ResumeIfStopped());
  std::shared_ptr<Rocks> r = im.current();
  RETURN_IF_ERROR(GetCollection(collection).status());
  RETURN_IF_ERROR(CheckSource(from));
  ASSIGN_OR_RETURN(uint64_t count, Count(collection));
  uint64_t seq = im.last_seq;
  std::unordered_map<std::string, bool> deleted_in_batch;
  std::vector<uint64_t> seqs;
  rocksdb::WriteBatch batch;
  for (const std::string& id : ids) {
    if (id.empty() || id.size() > kMaxDocumentIdBytes) continue;  // cannot exist
    if (deleted_in_batch.count(id)) continue;
    std::string key = DocKey(collection, id);
    ASSIGN_OR_RETURN(uint64_t previous, StoredInternalId(r->db.get(), r->documents, key));
    if (previous == 0) continue;
    deleted_in_batch[id] = true;
    --count;
    ChangelogRecord rec;
    rec.seq = ++seq;
    rec.op = ChangeOp::kDelete;
    rec.collection = std::string(collection);
    rec.doc_id = id;
    rec.previous_internal_id = previous;
    batch.Delete(r->documents, key);
    batch.Delete(r->id_map, IdMapKey(collection, previous));
    batch.Put(r->changelog, EncodeBigEndian64(rec.seq), EncodeChangelogRecord(rec));
    seqs.push_back(rec.seq);
  }
  if (from) batch.Put(r->meta, SourceKey(collection, from->source), EncodeBigEndian64(from->position));
  if (seqs.empty()) {
    if (from) RETURN_IF_ERROR(im.Commit(*r, &batch, "recording a source position"));
    return seqs;
  }
  batch.Put(r->meta, CountKey(collection), EncodeBigEndian64(count));
  batch.Put(r->meta, kLastSeqKey, EncodeBigEndian64(seq));
  RETURN_IF_ERROR(im.Commit(*r, &batch, "deleting documents"));
  im.last_seq = seq;
  return seqs;
}

absl::StatusOr<Document> Store::Get(std::string_view collection, std::string_view id) const {
  RETURN_IF_ERROR(GetCollection(collection).status());
  if (id.empty() || id.size() > kMaxDocumentIdBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("document id must be 1..", kMaxDocumentIdBytes, " bytes"));
  }
  std::shared_ptr<Rocks> r = impl_->current();
  rocksdb::PinnableSlice value;
  rocksdb::Status s =
      r->db->Get(rocksdb::ReadOptions(), r->documents, DocKey(collection, id), &value);
  if (s.IsNotFound()) {
    return absl::NotFoundError(absl::StrCat("document '", std::string(id),
                                            "' not found in collection '", std::string(collection),
                                            "'"));
  }
  RETURN_IF_ERROR(FromRocks(s, "reading document"));
  return DecodeDocument(std::string_view(value.data(), value.size()));
}

absl::StatusOr<Document> Store::GetByInternalId(std::string_view collection,
                                                uint64_t internal_id) const {
  RETURN_IF_ERROR(ValidateCollectionName(collection));
  std::shared_ptr<Rocks> r = impl_->current();
  std::string doc_id;
  rocksdb::Status s = r->db->Get(rocksdb::ReadOptions(), r->id_map,
                                     IdMapKey(collection, internal_id), &doc_id);
  if (s.IsNotFound()) {
    return absl::NotFoundError(absl::StrCat("internal id ", internal_id, " is not live in '",
                                            std::string(collection), "'"));
  }
  RETURN_IF_ERROR(FromRocks(s, "reading id map"));
  ASSIGN_OR_RETURN(Document doc, Get(collection, doc_id));
  // A concurrent overwrite between the two reads: the version we wanted is gone.
  if (doc.internal_id != internal_id) {
    return absl::NotFoundError(absl::StrCat("internal id ", internal_id, " was overwritten"));
  }
  return doc;
}

absl::StatusOr<ListResult> Store::List(std::string_view collection, std::string_view page_token,
                                       size_t limit, std::string_view id_prefix) const {
  RETURN_IF_ERROR(GetCollection(collection).status());
  if (limit == 0) limit = kDefaultListLimit;
  if (limit > kMaxListLimit) {
    return absl::InvalidArgumentError(absl::StrCat("limit ", limit, " exceeds ", kMaxListLimit));
  }
  std::string after;  // the last id of the previous page
  bool has_after = false;
  if (!page_token.empty()) {
    // Token: hex of (version char + last id). Hex keeps it printable ASCII
    // (proto strings must be UTF-8) whatever bytes the id holds.
    std::string raw;
    bool hex_ok = page_token.size() % 2 == 0;
    for (char c : page_token) hex_ok = hex_ok && std::isxdigit(static_cast<unsigned char>(c));
    if (hex_ok) raw = absl::HexStringToBytes(std::string(page_token));
    if (!hex_ok || raw.size() < 2 || raw[0] != kPageTokenVersion ||
        raw.size() - 1 > kMaxDocumentIdBytes) {
      return absl::InvalidArgumentError("malformed page token");
    }
    after = raw.substr(1);
    has_after = true;
  }
  std::string upper = CollectionPrefixEnd(collection);
  rocksdb::Slice upper_slice(upper);
  rocksdb::ReadOptions ro;
  ro.iterate_upper_bound = &upper_slice;
  std::shared_ptr<Rocks> r = impl_->current();
  std::unique_ptr<rocksdb::Iterator> it(r->db->NewIterator(ro, r->documents));
  // A token from before the prefix (or a forged one) starts at the prefix.
  if (!id_prefix.empty() && (!has_after || after < id_prefix)) {
    after = std::string(id_prefix);
    has_after = false;
  }
  std::string start = DocKey(collection, after);
  it->Seek(start);
  if (has_after && it->Valid() && it->key() == rocksdb::Slice(start)) it->Next();
  ListResult result;
  bool more = false;  // a document of this listing follows the page
  for (; it->Valid(); it->Next()) {
    ASSIGN_OR_RETURN(Document doc,
                     DecodeDocument(std::string_view(it->value().data(), it->value().size())));
    if (!id_prefix.empty() && !std::string_view(doc.id).starts_with(id_prefix)) break;
    if (result.documents.size() == limit) {
      more = true;
      break;
    }
    result.documents.push_back(std::move(doc));
  }
  RETURN_IF_ERROR(FromRocks(it->status(), "listing documents"));
  if (more && !result.documents.empty()) {
    result.next_page_token =
        absl::BytesToHexString(std::string(1, kPageTokenVersion) + result.documents.back().id);
  }
  return result;
}

absl::Status Store::ScanDocuments(std::string_view collection,
                                  const std::function<absl::Status(const Document&)>& fn,
                                  uint64_t* covered_seq) const {
  RETURN_IF_ERROR(GetCollection(collection).status());
  Impl& im = *impl_;
  std::shared_ptr<Rocks> r = impl_->current();
  const rocksdb::Snapshot* snapshot;
  {
    // Under the write lock no batch is half-applied to last_seq: the snapshot
    // contains exactly the records with seq <= the value read here.
    std::lock_guard<std::mutex> lock(im.write_mu);
    snapshot = r->db->GetSnapshot();
    if (covered_seq != nullptr) *covered_seq = im.last_seq;
  }
  struct Release {
    rocksdb::DB* db;
    const rocksdb::Snapshot* s;
    ~Release() { db->ReleaseSnapshot(s); }
  } release{r->db.get(), snapshot};
  std::string upper = CollectionPrefixEnd(collection);
  rocksdb::Slice upper_slice(upper);
  rocksdb::ReadOptions ro;
  ro.snapshot = snapshot;
  ro.iterate_upper_bound = &upper_slice;
  ro.fill_cache = false;
  std::unique_ptr<rocksdb::Iterator> it(r->db->NewIterator(ro, r->documents));
  for (it->Seek(CollectionPrefix(collection)); it->Valid(); it->Next()) {
    ASSIGN_OR_RETURN(Document doc,
                     DecodeDocument(std::string_view(it->value().data(), it->value().size())));
    RETURN_IF_ERROR(fn(doc));
  }
  return FromRocks(it->status(), "scanning documents");
}

absl::Status Store::ReadChangelog(
    uint64_t from_seq, const std::function<absl::Status(const ChangelogRecord&)>& fn) const {
  std::shared_ptr<Rocks> r = impl_->current();
  std::unique_ptr<rocksdb::Iterator> it(
      r->db->NewIterator(rocksdb::ReadOptions(), r->changelog));
  for (it->Seek(EncodeBigEndian64(from_seq)); it->Valid(); it->Next()) {
    ASSIGN_OR_RETURN(uint64_t key_seq,
                     DecodeBigEndian64(std::string_view(it->key().data(), it->key().size())));
    ASSIGN_OR_RETURN(ChangelogRecord rec, DecodeChangelogRecord(std::string_view(
                                              it->value().data(), it->value().size())));
    if (rec.seq != key_seq) {
      return absl::DataLossError(
          absl::StrCat("changelog record at key ", key_seq, " claims seq ", rec.seq));
    }
    RETURN_IF_ERROR(fn(rec));
  }
  return FromRocks(it->status(), "reading changelog");
}

absl::Status Store::TrimChangelog(uint64_t up_to_seq) {
  Impl& im = *impl_;
  std::lock_guard<std::mutex> lock(im.write_mu);
  RETURN_IF_ERROR(im.ResumeIfStopped());
  std::shared_ptr<Rocks> r = im.current();
  if (up_to_seq == 0) return absl::OkStatus();
  if (up_to_seq > im.last_seq) up_to_seq = im.last_seq;
  rocksdb::WriteBatch batch;
  batch.DeleteRange(r->changelog, EncodeBigEndian64(0), EncodeBigEndian64(up_to_seq + 1));
  return im.Commit(*r, &batch, "trimming changelog");
}

}  // namespace neodb::db
