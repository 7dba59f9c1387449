#include "db/store.h"

#include <chrono>
#include <filesystem>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "db/codec.h"
#include "db/rocks_logger.h"
#include "db/store_impl.h"
#include "db/fault_file_system.h"
#include "rocksdb/cache.h"
#include "rocksdb/listener.h"
#include "spdlog/spdlog.h"
#include "rocksdb/table.h"
#include "rocksdb/utilities/checkpoint.h"

namespace neodb::db {

absl::Status FromRocks(const rocksdb::Status& s, std::string_view context) {
  if (s.ok()) return absl::OkStatus();
  std::string msg = absl::StrCat(std::string(context), ": ", s.ToString());
  if (s.IsNotFound()) return absl::NotFoundError(msg);
  if (s.IsCorruption()) return absl::DataLossError(msg);
  if (s.IsInvalidArgument()) return absl::InvalidArgumentError(msg);
  if (s.IsNoSpace()) {
    return absl::ResourceExhaustedError(
        absl::StrCat(msg, " (the data directory's disk is full: free space and writes resume)"));
  }
  if (s.IsBusy() || s.IsTimedOut() || s.IsTryAgain()) return absl::UnavailableError(msg);
  if (s.IsIOError()) return absl::UnavailableError(msg);
  return absl::InternalError(msg);
}

namespace {

const char* const kColumnFamilies[] = {"collections", "documents", "id_map", "changelog", "meta"};

absl::StatusOr<uint64_t> ReadCounter(rocksdb::DB* db, rocksdb::ColumnFamilyHandle* cf,
                                     const std::string& key) {
  std::string value;
  rocksdb::Status s = db->Get(rocksdb::ReadOptions(), cf, key, &value);
  if (s.IsNotFound()) return 0;
  RETURN_IF_ERROR(FromRocks(s, absl::StrCat("reading ", key)));
  return DecodeBigEndian64(value);
}

// Disk full, design: RocksDB turns a failed WAL append or flush into a
// "background error" and refuses every write until it recovers. Its own
// recovery for NoSpace polls free space from a background thread on its own
// schedule; we turn that off and resume on the next write instead
// (Impl::ResumeIfStopped), so that "space came back" is seen exactly when a
// client writes again, deterministically, and the client gets the real
// reason (RESOURCE_EXHAUSTED) while the disk is still full. Nothing
// acknowledged is at risk: a write is acknowledged only after its WAL record
// is synced, and a failed one is not applied to the memtable.
constexpr uint64_t kResumeMarginBytes = 4 << 20;

class StopListener : public rocksdb::EventListener {
 public:
  explicit StopListener(std::shared_ptr<std::atomic<bool>> stopped)
      : stopped_(std::move(stopped)) {}
  const char* Name() const override { return "NeodbStopListener"; }
  void OnBackgroundError(rocksdb::BackgroundErrorReason, rocksdb::Status* error) override {
    if (error != nullptr && !error->ok()) *stopped_ = true;
  }
  void OnErrorRecoveryBegin(rocksdb::BackgroundErrorReason, rocksdb::Status,
                            bool* auto_recovery) override {
    *auto_recovery = false;
  }

 private:
  std::shared_ptr<std::atomic<bool>> stopped_;
};

}  // namespace

absl::Status Store::Impl::ResumeIfStopped() {
  if (!stopped->load()) return absl::OkStatus();
  // Resume flushes every memtable, which needs room for them. Trying while
  // the disk is still full fails in creating the new WAL, and RocksDB takes
  // that failure as fatal (writes then stay off until a restart). So first
  // check that the memtables' size plus a margin is free.
  uint64_t mem = 0;
  for (auto* h : handles) {
    uint64_t v = 0;
    if (db->GetIntProperty(h, "rocksdb.cur-size-all-mem-tables", &v)) mem += v;
  }
  const uint64_t need = 2 * mem + kResumeMarginBytes;
  uint64_t free = 0;
  rocksdb::IOStatus fs = db->GetFileSystem()->GetFreeSpace(db->GetName(), rocksdb::IOOptions(),
                                                         &free, nullptr);
  if (fs.ok() && free < need) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "the data directory's disk is full (", free >> 20, " MiB free, ", (need + (1 << 20) - 1) >> 20,
        " MiB needed to resume writing): free space and writes resume; reads keep working"));
  }
  rocksdb::Status s = db->Resume();
  if (!s.ok()) return FromRocks(s, "the store stopped writing after an I/O error");
  *stopped = false;
  spdlog::info("store: writes resumed after an I/O error");
  return absl::OkStatus();
}

absl::Status Store::Impl::Commit(rocksdb::WriteBatch* batch, std::string_view context) {
  rocksdb::Status s = db->Write(WriteOpts(), batch);
  if (s.IsIOError()) *stopped = true;
  return FromRocks(s, context);
}

Store::Store(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Store::~Store() {
  if (impl_ && impl_->db) {
    for (auto* h : impl_->handles) impl_->db->DestroyColumnFamilyHandle(h);
    impl_->db->Close();
  }
}

absl::StatusOr<std::unique_ptr<Store>> Store::Open(const std::string& path,
                                                   const StoreOptions& options) {
  rocksdb::Options db_options;
  db_options.create_if_missing = options.create_if_missing;
  db_options.create_missing_column_families = options.create_if_missing;
  db_options.IncreaseParallelism(2);
  // Never a LOG file on the data disk: see rocks_logger.h (it aborted the
  // process when the disk filled).
  db_options.info_log = NewSpdlogRocksLogger();
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  if (options.test_faults != nullptr) {
    impl->env = rocksdb::NewCompositeEnv(NewFaultFileSystem(options.test_faults));
    db_options.env = impl->env.get();
  }
  db_options.listeners.push_back(std::make_shared<StopListener>(impl->stopped));
  rocksdb::BlockBasedTableOptions table;
  table.block_cache = rocksdb::NewLRUCache(options.block_cache_bytes);
  if (options.memtable_bytes > 0) {
    db_options.db_write_buffer_size = options.memtable_bytes;
  }
  rocksdb::ColumnFamilyOptions cf_options(db_options);
  if (options.memtable_bytes > 0) cf_options.write_buffer_size = options.memtable_bytes / 4;
  cf_options.table_factory.reset(rocksdb::NewBlockBasedTableFactory(table));

  std::vector<rocksdb::ColumnFamilyDescriptor> descriptors;
  descriptors.emplace_back(rocksdb::kDefaultColumnFamilyName, cf_options);
  for (const char* name : kColumnFamilies) descriptors.emplace_back(name, cf_options);

  if (options.create_if_missing) {
    // Ourselves, so that RocksDB does not log a (harmless) error about the
    // missing directory on every first start.
    std::error_code ec;
    std::filesystem::create_directories(path, ec);
  }
  rocksdb::DB* raw = nullptr;
  rocksdb::Status opened = rocksdb::DB::Open(db_options, path, descriptors, &impl->handles, &raw);
  if (opened.IsNoSpace()) {
    // Recovery replays the WAL into new files, so opening needs some room.
    return absl::ResourceExhaustedError(
        absl::StrCat("opening store at ", path, ": ", opened.ToString(),
                     " (the data directory's disk is full: recovery needs room for the "
                     "unflushed writes; free space and start again)"));
  }
  RETURN_IF_ERROR(FromRocks(opened, absl::StrCat("opening store at ", path)));
  impl->db.reset(raw);
  impl->collections = impl->handles[1];
  impl->documents = impl->handles[2];
  impl->id_map = impl->handles[3];
  impl->changelog = impl->handles[4];
  impl->meta = impl->handles[5];
  auto store = std::unique_ptr<Store>(new Store(std::move(impl)));
  Impl& im = *store->impl_;
  ASSIGN_OR_RETURN(uint64_t last_seq, ReadCounter(im.db.get(), im.meta, kLastSeqKey));
  ASSIGN_OR_RETURN(uint64_t next_id, ReadCounter(im.db.get(), im.meta, kNextInternalIdKey));
  im.last_seq = last_seq;
  im.next_internal_id = next_id == 0 ? 1 : next_id;
  return store;
}

absl::Status Store::CreateCollection(const CollectionSpec& input) {
  RETURN_IF_ERROR(ValidateCollectionSpec(input));
  CollectionSpec spec = input;
  if (spec.created_at_micros == 0) {
    spec.created_at_micros = std::chrono::duration_cast<std::chrono::microseconds>(
                                 std::chrono::system_clock::now().time_since_epoch())
                                 .count();
  }
  Impl& im = *impl_;
  std::lock_guard<std::mutex> lock(im.write_mu);
  RETURN_IF_ERROR(im.ResumeIfStopped());
  std::string existing;
  rocksdb::Status s = im.db->Get(rocksdb::ReadOptions(), im.collections, spec.name, &existing);
  if (s.ok()) {
    return absl::AlreadyExistsError(absl::StrCat("collection '", spec.name, "' already exists"));
  }
  if (!s.IsNotFound()) return FromRocks(s, "reading collection");
  ChangelogRecord rec;
  rec.seq = im.last_seq + 1;
  rec.op = ChangeOp::kCreateCollection;
  rec.collection = spec.name;
  rocksdb::WriteBatch batch;
  batch.Put(im.collections, spec.name, EncodeCollectionSpec(spec));
  batch.Put(im.meta, CountKey(spec.name), EncodeBigEndian64(0));
  batch.Put(im.changelog, EncodeBigEndian64(rec.seq), EncodeChangelogRecord(rec));
  batch.Put(im.meta, kLastSeqKey, EncodeBigEndian64(rec.seq));
  RETURN_IF_ERROR(im.Commit(&batch, "creating collection"));
  im.last_seq = rec.seq;
  return absl::OkStatus();
}

absl::Status Store::DropCollection(std::string_view name) {
  RETURN_IF_ERROR(ValidateCollectionName(name));
  Impl& im = *impl_;
  std::lock_guard<std::mutex> lock(im.write_mu);
  RETURN_IF_ERROR(im.ResumeIfStopped());
  RETURN_IF_ERROR(GetCollection(name).status());
  ChangelogRecord rec;
  rec.seq = im.last_seq + 1;
  rec.op = ChangeOp::kDropCollection;
  rec.collection = std::string(name);
  // One batch: the spec, every document and id-map entry (range deletes, so
  // the batch stays small however large the collection), the counter and the
  // change-log record disappear together or not at all.
  rocksdb::WriteBatch batch;
  batch.Delete(im.collections, rocksdb::Slice(name.data(), name.size()));
  batch.DeleteRange(im.documents, CollectionPrefix(name), CollectionPrefixEnd(name));
  batch.DeleteRange(im.id_map, CollectionPrefix(name), CollectionPrefixEnd(name));
  batch.Delete(im.meta, CountKey(name));
  batch.DeleteRange(im.meta, SourceKey(name, ""), "source/" + CollectionPrefixEnd(name));
  batch.Put(im.changelog, EncodeBigEndian64(rec.seq), EncodeChangelogRecord(rec));
  batch.Put(im.meta, kLastSeqKey, EncodeBigEndian64(rec.seq));
  RETURN_IF_ERROR(im.Commit(&batch, "dropping collection"));
  im.last_seq = rec.seq;
  return absl::OkStatus();
}

absl::StatusOr<CollectionSpec> Store::GetCollection(std::string_view name) const {
  RETURN_IF_ERROR(ValidateCollectionName(name));
  std::string value;
  rocksdb::Status s = impl_->db->Get(rocksdb::ReadOptions(), impl_->collections,
                                     rocksdb::Slice(name.data(), name.size()), &value);
  if (s.IsNotFound()) {
    return absl::NotFoundError(absl::StrCat("collection '", std::string(name), "' does not exist"));
  }
  RETURN_IF_ERROR(FromRocks(s, "reading collection"));
  return DecodeCollectionSpec(value);
}

absl::StatusOr<std::vector<CollectionSpec>> Store::ListCollections() const {
  std::vector<CollectionSpec> out;
  std::unique_ptr<rocksdb::Iterator> it(
      impl_->db->NewIterator(rocksdb::ReadOptions(), impl_->collections));
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    ASSIGN_OR_RETURN(CollectionSpec spec, DecodeCollectionSpec(std::string_view(
                                              it->value().data(), it->value().size())));
    out.push_back(std::move(spec));
  }
  RETURN_IF_ERROR(FromRocks(it->status(), "listing collections"));
  return out;
}

absl::StatusOr<CollectionSpec> Store::UpdateCollection(std::string_view name,
                                                       const CollectionUpdate& update) {
  Impl& im = *impl_;
  std::lock_guard<std::mutex> lock(im.write_mu);
  RETURN_IF_ERROR(im.ResumeIfStopped());
  ASSIGN_OR_RETURN(CollectionSpec spec, GetCollection(name));
  if (update.model_id) spec.model_id = *update.model_id;
  if (update.model_dir) spec.model_dir = *update.model_dir;
  if (update.previous_model_dir) spec.previous_model_dir = *update.previous_model_dir;
  if (update.engine_state) spec.engine_state = *update.engine_state;
  if (update.index_spec) spec.index_spec = *update.index_spec;
  if (update.pooling) spec.pooling = *update.pooling;
  if (update.query_instruction) spec.query_instruction = *update.query_instruction;
  if (update.document_instruction) spec.document_instruction = *update.document_instruction;
  if (update.precision) spec.precision = *update.precision;
  if (update.fusion) spec.fusion = *update.fusion;
  if (update.fusion_alpha) spec.fusion_alpha = *update.fusion_alpha;
  RETURN_IF_ERROR(ValidateCollectionSpec(spec));
  rocksdb::WriteBatch batch;
  batch.Put(im.collections, spec.name, EncodeCollectionSpec(spec));
  RETURN_IF_ERROR(im.Commit(&batch, "updating collection"));
  return spec;
}

absl::StatusOr<uint64_t> Store::Count(std::string_view name) const {
  RETURN_IF_ERROR(GetCollection(name).status());
  return ReadCounter(impl_->db.get(), impl_->meta, CountKey(name));
}

uint64_t Store::LastSequence() const { return impl_->last_seq.load(); }

absl::Status Store::CreateCheckpoint(const std::string& dir) const {
  rocksdb::Checkpoint* raw = nullptr;
  RETURN_IF_ERROR(
      FromRocks(rocksdb::Checkpoint::Create(impl_->db.get(), &raw), "creating checkpoint object"));
  std::unique_ptr<rocksdb::Checkpoint> checkpoint(raw);
  return FromRocks(checkpoint->CreateCheckpoint(dir), absl::StrCat("checkpoint to ", dir));
}

absl::Status Store::Compact() {
  for (auto* h : impl_->handles) {
    RETURN_IF_ERROR(FromRocks(
        impl_->db->CompactRange(rocksdb::CompactRangeOptions(), h, nullptr, nullptr), "compact"));
  }
  return absl::OkStatus();
}

absl::Status Store::Flush() {
  return FromRocks(impl_->db->Flush(rocksdb::FlushOptions(), impl_->handles), "flush");
}

absl::StatusOr<uint64_t> Store::IntProperty(const std::string& name) const {
  uint64_t total = 0;
  for (auto* h : impl_->handles) {
    uint64_t v = 0;
    if (!impl_->db->GetIntProperty(h, name, &v)) {
      return absl::NotFoundError(absl::StrCat("no RocksDB integer property ", name));
    }
    total += v;
    if (absl::StartsWith(name, "rocksdb.block-cache-")) break;  // one cache for all
  }
  return total;
}

}  // namespace neodb::db
