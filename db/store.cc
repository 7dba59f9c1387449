#include "db/store.h"

#include <chrono>
#include <filesystem>
#include <limits>

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

Rocks::~Rocks() {
  if (!db) return;
  for (auto* h : handles) db->DestroyColumnFamilyHandle(h);
  db->Close();
}

absl::Status Store::Impl::ResumeIfStopped() {
  if (current()->read_only) RETURN_IF_ERROR(ReopenWritable());
  if (!stopped->load()) return absl::OkStatus();
  std::shared_ptr<Rocks> r = current();
  // Resume flushes every memtable, which needs room for them. Trying while
  // the disk is still full fails in creating the new WAL, and RocksDB takes
  // that failure as fatal (writes then stay off until a restart). So first
  // check that the memtables' size plus a margin is free.
  uint64_t mem = 0;
  for (auto* h : r->handles) {
    uint64_t v = 0;
    if (r->db->GetIntProperty(h, "rocksdb.cur-size-all-mem-tables", &v)) mem += v;
  }
  const uint64_t need = 2 * mem + kResumeMarginBytes;
  uint64_t free = 0;
  rocksdb::IOStatus fs = r->db->GetFileSystem()->GetFreeSpace(r->db->GetName(),
                                                              rocksdb::IOOptions(), &free, nullptr);
  if (fs.ok() && free < need) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "the disk of the data directory (", path, ") is full (", free >> 20, " MiB free, ",
        (need + (1 << 20) - 1) >> 20,
        " MiB needed to resume writing): free space and writes resume; reads keep working"));
  }
  rocksdb::Status s = r->db->Resume();
  if (!s.ok()) return FromRocks(s, "the store stopped writing after an I/O error");
  *stopped = false;
  SetRefusedBecause(absl::OkStatus());
  spdlog::info("store: writes resumed after an I/O error");
  return absl::OkStatus();
}

absl::Status Store::Impl::Commit(const Rocks& r, rocksdb::WriteBatch* batch,
                                 std::string_view context) {
  rocksdb::Status s = r.db->Write(WriteOpts(), batch);
  absl::Status out = FromRocks(s, context);
  if (s.IsIOError()) {
    *stopped = true;
    SetRefusedBecause(out);
  }
  return out;
}

absl::StatusOr<std::shared_ptr<Rocks>> Store::Impl::OpenRocks(bool read_only) const {
  const Impl& im = *this;
  auto r = std::make_shared<Rocks>();
  r->read_only = read_only;
  rocksdb::DB* raw = nullptr;
  rocksdb::Status s;
  if (read_only) {
    // Creating nothing: not even the directory (a mkdir is a write).
    rocksdb::Options o = im.db_options;
    o.create_if_missing = false;
    o.create_missing_column_families = false;
    s = rocksdb::DB::OpenForReadOnly(o, im.path, im.descriptors, &r->handles, &raw);
  } else {
    s = rocksdb::DB::Open(im.db_options, im.path, im.descriptors, &r->handles, &raw);
  }
  if (!s.ok()) {
    for (auto* h : r->handles) delete h;  // none on failure, but never leak
    r->handles.clear();
    return FromRocks(s, absl::StrCat(read_only ? "opening store read-only at "
                                               : "opening store at ",
                                     im.path));
  }
  r->db.reset(raw);
  r->collections = r->handles[1];
  r->documents = r->handles[2];
  r->id_map = r->handles[3];
  r->changelog = r->handles[4];
  r->meta = r->handles[5];
  return r;
}

uint64_t Store::Impl::FreeBytes() const {
  const Impl& im = *this;
  uint64_t free = 0;
  rocksdb::Env* env = im.db_options.env;
  rocksdb::IOStatus s = env->GetFileSystem()->GetFreeSpace(im.path, rocksdb::IOOptions(), &free,
                                                           nullptr);
  return s.ok() ? free : std::numeric_limits<uint64_t>::max();
}

namespace {

// What a writable open needs free: RocksDB replays the write-ahead logs and
// flushes them into table files, then writes a new MANIFEST, OPTIONS and WAL.
uint64_t BytesToOpenWritable(const std::string& path) {
  uint64_t wal = 0;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(path, ec)) {
    if (e.path().extension() == ".log") wal += e.file_size(ec);
  }
  return wal + kResumeMarginBytes;
}

absl::Status ReadOnlyReason(const std::string& path, uint64_t free, uint64_t need,
                            const absl::Status& open_error) {
  return absl::ResourceExhaustedError(absl::StrCat(
      "the disk of the data directory (", path, ") is full (", free >> 20, " MiB free, ",
      (need + (1 << 20) - 1) >> 20,
      " MiB needed to open the store for writing): the server is read-only, reads and searches "
      "work; free space on that disk and writes resume without a restart (opening for writing "
      "failed with: ", open_error.message(), ")"));
}

}  // namespace

absl::Status Store::Impl::ReopenWritable() {
  const uint64_t free = FreeBytes();
  const uint64_t need = BytesToOpenWritable(path);
  if (free < need) {
    absl::Status why;
    {
      std::lock_guard<std::mutex> lock(reason_mu);
      why = refused_because;
    }
    return ReadOnlyReason(path, free, need, why);
  }
  absl::StatusOr<std::shared_ptr<Rocks>> rw = OpenRocks(/*read_only=*/false);
  if (!rw.ok()) {
    SetRefusedBecause(rw.status());
    return ReadOnlyReason(path, FreeBytes(), need, rw.status());
  }
  // The writable instance holds everything the read-only one did (the same
  // files and WAL, now flushed), so the counters stay as read.
  rocks.store(*std::move(rw));
  SetRefusedBecause(absl::OkStatus());
  spdlog::warn("store at {}: the disk has room again ({} MiB free); writable", path, free >> 20);
  return absl::OkStatus();
}

Store::Store(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

// The instance closes when the last reader holding it is done.
Store::~Store() = default;

absl::StatusOr<std::unique_ptr<Store>> Store::Open(const std::string& path,
                                                   const StoreOptions& options) {
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  impl->path = path;
  rocksdb::Options& db_options = impl->db_options;
  db_options.create_if_missing = options.create_if_missing;
  db_options.create_missing_column_families = options.create_if_missing;
  db_options.IncreaseParallelism(2);
  // Never a LOG file on the data disk: see rocks_logger.h (it aborted the
  // process when the disk filled).
  db_options.info_log = NewSpdlogRocksLogger();
  if (options.test_faults != nullptr) {
    impl->env = rocksdb::NewCompositeEnv(NewFaultFileSystem(options.test_faults));
    db_options.env = impl->env.get();
  }
  db_options.listeners.push_back(std::make_shared<StopListener>(impl->stopped));
  rocksdb::BlockBasedTableOptions table;
  table.block_cache = rocksdb::NewLRUCache(options.block_cache_bytes);
  if (options.memtable_bytes > 0) {
    db_options.db_write_buffer_size = options.memtable_bytes;
    // A WAL file is deleted only once every column family with data in it
    // has flushed. "meta" (the counters) takes a few bytes per batch and, left
    // to RocksDB's default bound, held the log far past the memtables: 158 MiB
    // after a 100k-vector load (bench/peers/README.md), 25.6 MiB for 40 MiB
    // written with a 1 MiB budget (db_store_test). Past this bound RocksDB
    // flushes the column families that hold the oldest WAL, so the log on disk
    // stays near what the memtables hold.
    db_options.max_total_wal_size = 2 * options.memtable_bytes;
  }
  rocksdb::ColumnFamilyOptions cf_options(db_options);
  if (options.memtable_bytes > 0) cf_options.write_buffer_size = options.memtable_bytes / 4;
  cf_options.table_factory.reset(rocksdb::NewBlockBasedTableFactory(table));

  impl->descriptors.emplace_back(rocksdb::kDefaultColumnFamilyName, cf_options);
  for (const char* name : kColumnFamilies) impl->descriptors.emplace_back(name, cf_options);

  if (options.create_if_missing) {
    // Ourselves, so that RocksDB does not log a (harmless) error about the
    // missing directory on every first start.
    std::error_code ec;
    std::filesystem::create_directories(path, ec);
  }
  absl::StatusOr<std::shared_ptr<Rocks>> opened = impl->OpenRocks(/*read_only=*/false);
  if (!opened.ok() && (absl::IsResourceExhausted(opened.status()) ||
                       absl::IsUnavailable(opened.status()))) {
    // Opening for writing writes (a new MANIFEST, OPTIONS file and WAL, and
    // the WAL replay's flush), so on a full disk it fails, also after a kill
    // -9 that left writes in the WAL. Reading needs none of that: a
    // read-only open replays the WAL into memory, so every acknowledged
    // write is readable. Serve reads that way; the first write (or
    // Database's probe) once there is room reopens the store writable.
    const uint64_t free = impl->FreeBytes();
    const uint64_t need = BytesToOpenWritable(path);
    if (absl::IsResourceExhausted(opened.status()) || free < need) {
      absl::StatusOr<std::shared_ptr<Rocks>> ro = impl->OpenRocks(/*read_only=*/true);
      if (!ro.ok()) {
        return absl::Status(opened.status().code(),
                            absl::StrCat(opened.status().message(), "; and read-only: ",
                                         ro.status().message()));
      }
      impl->refused_because = opened.status();
      spdlog::error("{}", std::string(ReadOnlyReason(path, free, need, opened.status()).message()));
      opened = std::move(ro);
    }
  }
  RETURN_IF_ERROR(opened.status());
  impl->rocks.store(*std::move(opened));
  auto store = std::unique_ptr<Store>(new Store(std::move(impl)));
  Impl& im = *store->impl_;
  std::shared_ptr<Rocks> r = im.current();
  ASSIGN_OR_RETURN(uint64_t last_seq, ReadCounter(r->db.get(), r->meta, kLastSeqKey));
  ASSIGN_OR_RETURN(uint64_t next_id, ReadCounter(r->db.get(), r->meta, kNextInternalIdKey));
  im.last_seq = last_seq;
  im.next_internal_id = next_id == 0 ? 1 : next_id;
  return store;
}

absl::Status Store::WriteState() const {
  if (impl_->current()->read_only) {
    const uint64_t free = impl_->FreeBytes();
    const uint64_t need = BytesToOpenWritable(impl_->path);
    std::lock_guard<std::mutex> lock(impl_->reason_mu);
    return ReadOnlyReason(impl_->path, free, need, impl_->refused_because);
  }
  if (impl_->stopped->load()) {
    std::lock_guard<std::mutex> lock(impl_->reason_mu);
    if (!impl_->refused_because.ok()) return impl_->refused_because;
    return absl::UnavailableError("the store stopped writing after an I/O error");
  }
  return absl::OkStatus();
}

absl::Status Store::TryReopenWritable() {
  if (!impl_->current()->read_only) return absl::OkStatus();
  std::lock_guard<std::mutex> lock(impl_->write_mu);
  if (!impl_->current()->read_only) return absl::OkStatus();
  return impl_->ReopenWritable();
}

bool Store::read_only() const { return impl_->current()->read_only; }

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
  std::shared_ptr<Rocks> r = im.current();
  std::string existing;
  rocksdb::Status s = r->db->Get(rocksdb::ReadOptions(), r->collections, spec.name, &existing);
  if (s.ok()) {
    return absl::AlreadyExistsError(absl::StrCat("collection '", spec.name, "' already exists"));
  }
  if (!s.IsNotFound()) return FromRocks(s, "reading collection");
  ChangelogRecord rec;
  rec.seq = im.last_seq + 1;
  rec.op = ChangeOp::kCreateCollection;
  rec.collection = spec.name;
  rocksdb::WriteBatch batch;
  batch.Put(r->collections, spec.name, EncodeCollectionSpec(spec));
  batch.Put(r->meta, CountKey(spec.name), EncodeBigEndian64(0));
  batch.Put(r->changelog, EncodeBigEndian64(rec.seq), EncodeChangelogRecord(rec));
  batch.Put(r->meta, kLastSeqKey, EncodeBigEndian64(rec.seq));
  RETURN_IF_ERROR(im.Commit(*r, &batch, "creating collection"));
  im.last_seq = rec.seq;
  return absl::OkStatus();
}

absl::Status Store::DropCollection(std::string_view name) {
  RETURN_IF_ERROR(ValidateCollectionName(name));
  Impl& im = *impl_;
  std::lock_guard<std::mutex> lock(im.write_mu);
  RETURN_IF_ERROR(im.ResumeIfStopped());
  std::shared_ptr<Rocks> r = im.current();
  RETURN_IF_ERROR(GetCollection(name).status());
  ChangelogRecord rec;
  rec.seq = im.last_seq + 1;
  rec.op = ChangeOp::kDropCollection;
  rec.collection = std::string(name);
  // One batch: the spec, every document and id-map entry (range deletes, so
  // the batch stays small however large the collection), the counter and the
  // change-log record disappear together or not at all.
  rocksdb::WriteBatch batch;
  batch.Delete(r->collections, rocksdb::Slice(name.data(), name.size()));
  batch.DeleteRange(r->documents, CollectionPrefix(name), CollectionPrefixEnd(name));
  batch.DeleteRange(r->id_map, CollectionPrefix(name), CollectionPrefixEnd(name));
  batch.Delete(r->meta, CountKey(name));
  batch.DeleteRange(r->meta, SourceKey(name, ""), "source/" + CollectionPrefixEnd(name));
  batch.Put(r->changelog, EncodeBigEndian64(rec.seq), EncodeChangelogRecord(rec));
  batch.Put(r->meta, kLastSeqKey, EncodeBigEndian64(rec.seq));
  RETURN_IF_ERROR(im.Commit(*r, &batch, "dropping collection"));
  im.last_seq = rec.seq;
  return absl::OkStatus();
}

absl::StatusOr<CollectionSpec> Store::GetCollection(std::string_view name) const {
  RETURN_IF_ERROR(ValidateCollectionName(name));
  std::shared_ptr<Rocks> r = impl_->current();
  std::string value;
  rocksdb::Status s = r->db->Get(rocksdb::ReadOptions(), r->collections,
                                     rocksdb::Slice(name.data(), name.size()), &value);
  if (s.IsNotFound()) {
    return absl::NotFoundError(absl::StrCat("collection '", std::string(name), "' does not exist"));
  }
  RETURN_IF_ERROR(FromRocks(s, "reading collection"));
  return DecodeCollectionSpec(value);
}

absl::StatusOr<std::vector<CollectionSpec>> Store::ListCollections() const {
  std::shared_ptr<Rocks> r = impl_->current();
  std::vector<CollectionSpec> out;
  std::unique_ptr<rocksdb::Iterator> it(
      r->db->NewIterator(rocksdb::ReadOptions(), r->collections));
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
  std::shared_ptr<Rocks> r = im.current();
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
  batch.Put(r->collections, spec.name, EncodeCollectionSpec(spec));
  RETURN_IF_ERROR(im.Commit(*r, &batch, "updating collection"));
  return spec;
}

absl::StatusOr<uint64_t> Store::Count(std::string_view name) const {
  RETURN_IF_ERROR(GetCollection(name).status());
  std::shared_ptr<Rocks> r = impl_->current();
  return ReadCounter(r->db.get(), r->meta, CountKey(name));
}

uint64_t Store::LastSequence() const { return impl_->last_seq.load(); }

absl::Status Store::CreateCheckpoint(const std::string& dir) const {
  // A checkpoint writes (hard links, a MANIFEST copy, and a flush first);
  // a read-only store has neither the room nor the means.
  RETURN_IF_ERROR(WriteState());
  std::shared_ptr<Rocks> r = impl_->current();
  rocksdb::Checkpoint* raw = nullptr;
  RETURN_IF_ERROR(
      FromRocks(rocksdb::Checkpoint::Create(r->db.get(), &raw), "creating checkpoint object"));
  std::unique_ptr<rocksdb::Checkpoint> checkpoint(raw);
  return FromRocks(checkpoint->CreateCheckpoint(dir), absl::StrCat("checkpoint to ", dir));
}

absl::Status Store::Compact() {
  RETURN_IF_ERROR(WriteState());
  std::shared_ptr<Rocks> r = impl_->current();
  for (auto* h : r->handles) {
    RETURN_IF_ERROR(FromRocks(
        r->db->CompactRange(rocksdb::CompactRangeOptions(), h, nullptr, nullptr), "compact"));
  }
  return absl::OkStatus();
}

absl::Status Store::Flush() {
  std::shared_ptr<Rocks> r = impl_->current();
  // A read-only store has nothing of its own to flush: its memtables hold
  // the WAL it replayed, which stays on disk.
  if (r->read_only) return absl::OkStatus();
  return FromRocks(r->db->Flush(rocksdb::FlushOptions(), r->handles), "flush");
}

absl::StatusOr<uint64_t> Store::IntProperty(const std::string& name) const {
  std::shared_ptr<Rocks> r = impl_->current();
  uint64_t total = 0;
  for (auto* h : r->handles) {
    uint64_t v = 0;
    if (!r->db->GetIntProperty(h, name, &v)) {
      return absl::NotFoundError(absl::StrCat("no RocksDB integer property ", name));
    }
    total += v;
    if (absl::StartsWith(name, "rocksdb.block-cache-")) break;  // one cache for all
  }
  return total;
}

}  // namespace neodb::db
