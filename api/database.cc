// Database: opening, startup recovery, collections, snapshots, maintenance.
// Writes and searches: database_io.cc. Reindex: database_reindex.cc.
#include "api/database.h"

#include <filesystem>

#include "absl/strings/str_cat.h"
#include "api/database_internal.h"
#include "index/index_factory.h"
#include "index/snapshot.h"
#include "spdlog/spdlog.h"

namespace neodb::api {
namespace fs = std::filesystem;

encoder::EmbedOptions EmbedOptionsFor(const db::CollectionSpec& spec, const std::string& prefix) {
  encoder::EmbedOptions o;
  o.pooling = spec.pooling == "cls" ? encoder::Pooling::kCls : encoder::Pooling::kMean;
  // Cosine indexes normalise on add and query themselves.
  o.normalize = false;
  o.overflow = spec.overflow == "chunk" ? encoder::Overflow::kChunk : encoder::Overflow::kError;
  o.prefix = prefix;
  return o;
}

absl::StatusOr<std::unique_ptr<Database>> Database::Open(const DatabaseOptions& options,
                                                         std::unique_ptr<Embedder> embedder) {
  if (options.data_dir.empty()) return absl::InvalidArgumentError("data_dir is empty");
  NEODB_CHECK(embedder != nullptr);
  std::error_code ec;
  fs::create_directories(fs::path(options.data_dir) / "snapshots", ec);
  if (ec) {
    return absl::InternalError(
        absl::StrCat("cannot create ", options.data_dir, "/snapshots: ", ec.message()));
  }
  std::unique_ptr<Database> d(new Database());
  d->options_ = options;
  db::StoreOptions so;
  so.sync_writes = options.sync_writes;
  ASSIGN_OR_RETURN(d->store_, db::Store::Open((fs::path(options.data_dir) / "store").string(), so));
  auto m = std::make_shared<Model>();
  m->embedder = std::move(embedder);
  m->batcher = std::make_unique<EmbedBatcher>(m->embedder.get(), options.batcher);
  d->model_ = std::move(m);
  RETURN_IF_ERROR(d->Startup());
  d->maintenance_ = std::thread([p = d.get()] { p->MaintenanceLoop(); });
  return d;
}

Database::~Database() {
  absl::Status s = Close();
  if (!s.ok()) spdlog::error("closing the database: {}", s.ToString());
}

absl::Status Database::Close() {
  {
    std::lock_guard<std::mutex> lock(maint_mu_);
    if (closed_) return absl::OkStatus();
    closed_ = true;
    stop_ = true;
  }
  maint_cv_.notify_all();
  if (maintenance_.joinable()) maintenance_.join();
  WaitForReindex();
  {
    std::lock_guard<std::mutex> lock(reindex_mu_);
    for (auto& t : reindex_threads_) t.join();
    reindex_threads_.clear();
  }
  absl::Status s;
  // A database whose startup failed never snapshots: its indexes are partial.
  if (options_.snapshot_on_close && started_) {
    std::lock_guard<std::mutex> lock(write_mu_);
    s = SnapshotLocked().status();
  }
  absl::Status f = store_->Flush();
  {
    std::lock_guard<std::mutex> lock(model_mu_);
    model_.reset();  // stops the batcher's worker
  }
  return s.ok() ? f : s;
}

std::string Database::SnapshotDir(const std::string& name) const {
  return (fs::path(options_.data_dir) / "snapshots" / name).string();
}

std::shared_ptr<Database::Model> Database::model() const {
  std::lock_guard<std::mutex> lock(model_mu_);
  return model_;
}

absl::StatusOr<std::shared_ptr<Database::Collection>> Database::Find(
    const std::string& name) const {
  std::shared_lock<std::shared_mutex> lock(collections_mu_);
  auto it = collections_.find(name);
  if (it == collections_.end()) {
    return absl::NotFoundError(absl::StrCat("collection '", name, "' does not exist"));
  }
  return it->second;
}

// --- Startup ----------------------------------------------------------------

absl::Status Database::LoadCollection(const db::CollectionSpec& spec, uint64_t last_seq,
                                      std::shared_ptr<Collection>* out, bool* from_snapshot) {
  auto c = std::make_shared<Collection>();
  c->spec = spec;
  ASSIGN_OR_RETURN(index::Metric metric, index::ParseMetric(spec.metric));
  ASSIGN_OR_RETURN(std::unique_ptr<index::VectorIndex> fresh,
                   index::MakeIndex(spec.index_spec, static_cast<int>(spec.dimension), metric));
  const std::string canonical = fresh->spec();

  *from_snapshot = false;
  auto snap = index::ReadLatestSnapshot(SnapshotDir(spec.name));
  if (snap.ok()) {
    const auto& m = snap->manifest;
    if (m.spec == canonical && m.dimension == static_cast<int>(spec.dimension) &&
        m.metric == metric && m.model_id == spec.model_id && m.covered_seq <= last_seq) {
      c->index = std::move(snap->index);
      c->covered_seq = m.covered_seq;
      *from_snapshot = true;
    } else {
      spdlog::warn("collection '{}': snapshot {} does not match the collection; rebuilding",
                   spec.name, snap->path);
    }
  } else if (!absl::IsNotFound(snap.status())) {
    spdlog::warn("collection '{}': no usable snapshot ({}); rebuilding", spec.name,
                 snap.status().ToString());
  }

  // Metadata for filters (and the model-id census) from one store scan; the
  // vectors too when the index must be rebuilt.
  std::vector<int64_t> ids;
  std::vector<float> vecs;
  std::map<std::string, uint64_t> models;
  if (!*from_snapshot) c->index = std::move(fresh);
  uint64_t covered = 0;
  RETURN_IF_ERROR(store_->ScanDocuments(
      spec.name,
      [&](const db::Document& d) -> absl::Status {
        c->metadata[static_cast<int64_t>(d.internal_id)] = d.metadata;
        ++models[d.model_id];
        if (!*from_snapshot) {
          ids.push_back(static_cast<int64_t>(d.internal_id));
          vecs.insert(vecs.end(), d.vector.begin(), d.vector.end());
          if (ids.size() >= 4096) {
            RETURN_IF_ERROR(c->index->Add(ids, vecs));
            ids.clear();
            vecs.clear();
          }
        }
        return absl::OkStatus();
      },
      &covered));
  if (!*from_snapshot) {
    if (!ids.empty()) RETURN_IF_ERROR(c->index->Add(ids, vecs));
    c->covered_seq = covered;
    ++index_rebuilds_;
  } else {
    ++snapshot_loads_;
  }
  // A reindex commits the documents and then the collection's model id in two
  // store batches; a crash in between leaves every document on the new model.
  // Roll that commit forward.
  if (models.size() == 1 && !models.begin()->first.empty() &&
      models.begin()->first != spec.model_id) {
    spdlog::warn("collection '{}': finishing an interrupted reindex (model {} -> {})", spec.name,
                 spec.model_id, models.begin()->first);
    db::CollectionUpdate u;
    u.model_id = models.begin()->first;
    ASSIGN_OR_RETURN(c->spec, store_->UpdateCollection(spec.name, u));
    // The snapshot (if any) was for the old model: rebuild.
    if (*from_snapshot) {
      c->needs_rebuild = true;
    }
  }
  *out = std::move(c);
  return absl::OkStatus();
}

absl::Status Database::Startup() {
  const uint64_t last = store_->LastSequence();
  ASSIGN_OR_RETURN(std::vector<db::CollectionSpec> specs, store_->ListCollections());
  uint64_t replay_from = last;
  for (const auto& spec : specs) {
    std::shared_ptr<Collection> c;
    bool from_snapshot = false;
    RETURN_IF_ERROR(LoadCollection(spec, last, &c, &from_snapshot));
    if (from_snapshot) replay_from = std::min(replay_from, c->covered_seq);
    collections_[spec.name] = std::move(c);
  }
  // Replay the change log after each snapshot's covered position.
  if (replay_from < last) {
    bool first = true;
    uint64_t replayed = 0;
    RETURN_IF_ERROR(
        store_->ReadChangelog(replay_from + 1, [&](const db::ChangelogRecord& r) -> absl::Status {
          if (first && r.seq != replay_from + 1) {
            // The log was trimmed past an old snapshot: those must rebuild.
            for (auto& [name, c] : collections_) {
              if (c->covered_seq + 1 < r.seq && !c->needs_rebuild) c->needs_rebuild = true;
            }
          }
          first = false;
          auto it = collections_.find(r.collection);
          if (it == collections_.end()) return absl::OkStatus();
          Collection& c = *it->second;
          if (r.seq <= c.covered_seq || c.needs_rebuild) return absl::OkStatus();
          if (r.op == db::ChangeOp::kDropCollection || r.op == db::ChangeOp::kCreateCollection) {
            c.needs_rebuild = true;  // the snapshot predates a drop + re-create
            return absl::OkStatus();
          }
          std::vector<int64_t> remove;
          if (r.previous_internal_id != 0)
            remove.push_back(static_cast<int64_t>(r.previous_internal_id));
          if (r.op == db::ChangeOp::kUpsert && r.internal_id != 0)
            remove.push_back(static_cast<int64_t>(r.internal_id));
          if (!remove.empty()) RETURN_IF_ERROR(c.index->Remove(remove).status());
          if (r.op == db::ChangeOp::kUpsert) {
            auto doc = store_->GetByInternalId(r.collection, r.internal_id);
            int64_t id = static_cast<int64_t>(r.internal_id);
            if (doc.ok() && !c.index->Contains(id)) {
              RETURN_IF_ERROR(c.index->Add({&id, 1}, doc->vector));
            } else if (!absl::IsNotFound(doc.status())) {
              return doc.status();
            }
          }
          ++replayed;
          return absl::OkStatus();
        }));
    if (first) {
      // Nothing retained after replay_from although last > replay_from.
      for (auto& [name, c] : collections_) {
        if (c->covered_seq < last) c->needs_rebuild = true;
      }
    }
    replayed_changes_ += replayed;
  }
  // Safety net: the index must hold exactly the stored documents.
  for (auto& [name, c] : collections_) {
    ASSIGN_OR_RETURN(uint64_t count, store_->Count(name));
    if (!c->needs_rebuild && c->index->size() != count) {
      spdlog::warn("collection '{}': index holds {} vectors, store {} documents; rebuilding", name,
                   c->index->size(), count);
      c->needs_rebuild = true;
    }
    if (c->needs_rebuild) RETURN_IF_ERROR(RebuildIndex(*c, /*background=*/false));
  }
  applied_seq_ = last;
  snapshot_seq_ = last;
  bool all_from_snapshot = index_rebuilds_ == 0 && replayed_changes_ == 0;
  if (!all_from_snapshot && !collections_.empty()) RETURN_IF_ERROR(SnapshotLocked().status());
  started_ = true;
  spdlog::info("database open: {} collections, {} from snapshots, {} rebuilt, {} changes replayed",
               collections_.size(), snapshot_loads_.load(), index_rebuilds_.load(),
               replayed_changes_.load());
  return absl::OkStatus();
}

// Builds a fresh index from the store and swaps it in. In the background
// (maintenance), writes go on meanwhile and are caught up under write_mu_
// before the swap; at startup nothing else runs.
absl::Status Database::RebuildIndex(Collection& c, bool background) {
  db::CollectionSpec spec;
  {
    std::shared_lock<std::shared_mutex> lock(c.mu);
    spec = c.spec;
  }
  ASSIGN_OR_RETURN(index::Metric metric, index::ParseMetric(spec.metric));
  ASSIGN_OR_RETURN(std::shared_ptr<index::VectorIndex> fresh,
                   index::MakeIndex(spec.index_spec, static_cast<int>(spec.dimension), metric));
  uint64_t pin = 0;
  if (background) {
    std::lock_guard<std::mutex> lock(write_mu_);
    pin = applied_seq_;
    pins_.insert(pin);
  }
  std::vector<int64_t> ids;
  std::vector<float> vecs;
  std::unordered_map<int64_t, db::Metadata> metadata;
  uint64_t covered = 0;
  absl::Status s = store_->ScanDocuments(
      spec.name,
      [&](const db::Document& d) -> absl::Status {
        metadata[static_cast<int64_t>(d.internal_id)] = d.metadata;
        ids.push_back(static_cast<int64_t>(d.internal_id));
        vecs.insert(vecs.end(), d.vector.begin(), d.vector.end());
        if (ids.size() >= 4096) {
          RETURN_IF_ERROR(fresh->Add(ids, vecs));
          ids.clear();
          vecs.clear();
        }
        return absl::OkStatus();
      },
      &covered);
  if (s.ok() && !ids.empty()) s = fresh->Add(ids, vecs);
  std::unique_lock<std::mutex> wlock(write_mu_, std::defer_lock);
  if (background) {
    wlock.lock();
    pins_.erase(pins_.find(pin));
  }
  RETURN_IF_ERROR(s);
  if (background) {
    // Catch up with writes that committed after the scan.
    RETURN_IF_ERROR(store_->ReadChangelog(covered + 1, [&](const db::ChangelogRecord& r) {
      if (r.seq > applied_seq_ || r.collection != spec.name) return absl::OkStatus();
      std::vector<int64_t> remove;
      if (r.previous_internal_id != 0)
        remove.push_back(static_cast<int64_t>(r.previous_internal_id));
      if (r.op == db::ChangeOp::kUpsert) remove.push_back(static_cast<int64_t>(r.internal_id));
      if (!remove.empty()) RETURN_IF_ERROR(fresh->Remove(remove).status());
      for (int64_t id : remove) metadata.erase(id);
      if (r.op == db::ChangeOp::kUpsert) {
        auto doc = store_->GetByInternalId(r.collection, r.internal_id);
        if (doc.ok()) {
          int64_t id = static_cast<int64_t>(r.internal_id);
          RETURN_IF_ERROR(fresh->Add({&id, 1}, doc->vector));
          metadata[id] = doc->metadata;
        } else if (!absl::IsNotFound(doc.status())) {
          return doc.status();
        }
      }
      return absl::OkStatus();
    }));
  }
  {
    std::unique_lock<std::shared_mutex> lock(c.mu);
    c.index = std::move(fresh);
    c.metadata = std::move(metadata);
  }
  c.needs_rebuild = false;
  ++index_rebuilds_;
  return absl::OkStatus();
}

// --- Collections ------------------------------------------------------------

absl::StatusOr<CollectionInfo> Database::CreateCollection(db::CollectionSpec spec) {
  auto m = model();
  spec.dimension = static_cast<uint32_t>(m->embedder->dim());
  spec.model_id = m->embedder->model_id();
  RETURN_IF_ERROR(db::ValidateCollectionSpec(spec));
  RETURN_IF_ERROR(index::ValidateIndexSpec(spec.index_spec, static_cast<int>(spec.dimension)));
  ASSIGN_OR_RETURN(index::Metric metric, index::ParseMetric(spec.metric));
  ASSIGN_OR_RETURN(std::shared_ptr<index::VectorIndex> idx,
                   index::MakeIndex(spec.index_spec, static_cast<int>(spec.dimension), metric));
  std::lock_guard<std::mutex> wlock(write_mu_);
  {
    std::shared_lock<std::shared_mutex> lock(collections_mu_);
    if (collections_.count(spec.name)) {
      return absl::AlreadyExistsError(absl::StrCat("collection '", spec.name, "' already exists"));
    }
  }
  // Leftovers of a dropped collection of the same name must never load.
  std::error_code ec;
  fs::remove_all(SnapshotDir(spec.name), ec);
  RETURN_IF_ERROR(store_->CreateCollection(spec));
  ASSIGN_OR_RETURN(db::CollectionSpec stored, store_->GetCollection(spec.name));
  applied_seq_ = store_->LastSequence();
  auto c = std::make_shared<Collection>();
  c->spec = stored;
  c->index = std::move(idx);
  CollectionInfo info{stored, 0, 0, c->index->spec()};
  std::unique_lock<std::shared_mutex> lock(collections_mu_);
  collections_[spec.name] = std::move(c);
  return info;
}

absl::Status Database::DropCollection(const std::string& name) {
  ASSIGN_OR_RETURN(std::shared_ptr<Collection> c, Find(name));
  {
    std::lock_guard<std::mutex> lock(c->reindex_mu);
    if (c->reindex.state == ReindexProgress::State::kRunning) {
      return absl::FailedPreconditionError(
          absl::StrCat("collection '", name, "' is being reindexed; drop it afterwards"));
    }
  }
  std::lock_guard<std::mutex> wlock(write_mu_);
  RETURN_IF_ERROR(store_->DropCollection(name));
  applied_seq_ = store_->LastSequence();
  {
    std::unique_lock<std::shared_mutex> lock(collections_mu_);
    collections_.erase(name);
  }
  std::error_code ec;
  fs::remove_all(SnapshotDir(name), ec);
  return absl::OkStatus();
}

absl::StatusOr<CollectionInfo> Database::DescribeCollection(const std::string& name) const {
  ASSIGN_OR_RETURN(std::shared_ptr<Collection> c, Find(name));
  CollectionInfo info;
  {
    std::shared_lock<std::shared_mutex> lock(c->mu);
    info.spec = c->spec;
    info.index_size = c->index->size();
    info.index_spec = c->index->spec();
  }
  ASSIGN_OR_RETURN(info.count, store_->Count(name));
  return info;
}

absl::StatusOr<std::vector<CollectionInfo>> Database::ListCollections() const {
  std::vector<std::string> names;
  {
    std::shared_lock<std::shared_mutex> lock(collections_mu_);
    for (const auto& [name, c] : collections_) names.push_back(name);
  }
  std::vector<CollectionInfo> out;
  for (const auto& name : names) {
    auto info = DescribeCollection(name);
    if (info.ok()) out.push_back(std::move(*info));  // dropped meanwhile: skip
  }
  return out;
}

// --- Snapshots and maintenance ------------------------------------------------

absl::StatusOr<uint64_t> Database::Snapshot() {
  std::lock_guard<std::mutex> lock(write_mu_);
  return SnapshotLocked();
}

absl::StatusOr<uint64_t> Database::SnapshotLocked() {
  // Called with write_mu_ held, or from Startup/Close when nothing else runs.
  std::vector<std::pair<std::string, std::shared_ptr<Collection>>> all;
  {
    std::shared_lock<std::shared_mutex> lock(collections_mu_);
    all.assign(collections_.begin(), collections_.end());
  }
  const uint64_t covered = applied_seq_;
  for (auto& [name, c] : all) {
    std::shared_ptr<index::VectorIndex> idx;
    std::string model_id;
    {
      std::shared_lock<std::shared_mutex> lock(c->mu);
      idx = c->index;
      model_id = c->spec.model_id;
    }
    ASSIGN_OR_RETURN(std::string path, index::WriteSnapshot(SnapshotDir(name), *idx, covered,
                                                            model_id, options_.snapshots_kept));
    ++snapshots_written_;
  }
  snapshot_seq_ = covered;
  uint64_t trim = covered;
  if (!pins_.empty()) trim = std::min(trim, *pins_.begin());
  if (trim > 0) RETURN_IF_ERROR(store_->TrimChangelog(trim));
  return covered;
}

void Database::MaintenanceLoop() {
  absl::Time last_snapshot = absl::Now();
  std::unique_lock<std::mutex> lock(maint_mu_);
  while (!stop_) {
    maint_cv_.wait_for(lock, std::chrono::milliseconds(500));
    if (stop_) break;
    lock.unlock();
    // HNSW cannot delete: rebuild when tombstones pile up.
    std::vector<std::shared_ptr<Collection>> all;
    {
      std::shared_lock<std::shared_mutex> cl(collections_mu_);
      for (auto& [n, c] : collections_) all.push_back(c);
    }
    for (auto& c : all) {
      bool rebuild;
      {
        std::shared_lock<std::shared_mutex> cl(c->mu);
        rebuild = c->index->NeedsRebuild();
      }
      {
        std::lock_guard<std::mutex> wl(write_mu_);
        rebuild = rebuild || c->needs_rebuild;
      }
      if (rebuild) {
        absl::Status s = RebuildIndex(*c, /*background=*/true);
        if (!s.ok()) spdlog::error("rebuilding '{}': {}", c->spec.name, s.ToString());
      }
    }
    if (options_.snapshot_interval > absl::ZeroDuration() &&
        absl::Now() - last_snapshot >= options_.snapshot_interval) {
      last_snapshot = absl::Now();
      bool changed;
      {
        std::lock_guard<std::mutex> wl(write_mu_);
        changed = applied_seq_ > snapshot_seq_;
      }
      if (changed) {
        auto s = Snapshot();
        if (!s.ok()) spdlog::error("periodic snapshot: {}", s.status().ToString());
      }
    }
    lock.lock();
  }
}

// --- Admin ------------------------------------------------------------------

absl::Status Database::Compact() { return store_->Compact(); }

absl::StatusOr<VerifyReport> Database::Verify(const std::string& name) const {
  ASSIGN_OR_RETURN(std::shared_ptr<Collection> c, Find(name));
  // Hold writes still so the store and the index are compared at one point.
  std::lock_guard<std::mutex> wlock(write_mu_);
  VerifyReport r;
  std::shared_ptr<index::VectorIndex> idx;
  {
    std::shared_lock<std::shared_mutex> lock(c->mu);
    idx = c->index;
    r.model_id = c->spec.model_id;
  }
  std::vector<int64_t> indexed = idx->Ids();  // ascending
  r.indexed = indexed.size();
  std::vector<int64_t> stored;
  RETURN_IF_ERROR(store_->ScanDocuments(name, [&](const db::Document& d) {
    stored.push_back(static_cast<int64_t>(d.internal_id));
    if (d.model_id != r.model_id) ++r.foreign_model;
    return absl::OkStatus();
  }));
  r.stored = stored.size();
  std::sort(stored.begin(), stored.end());
  std::vector<int64_t> diff;
  std::set_difference(stored.begin(), stored.end(), indexed.begin(), indexed.end(),
                      std::back_inserter(diff));
  r.missing_from_index = diff.size();
  diff.clear();
  std::set_difference(indexed.begin(), indexed.end(), stored.begin(), stored.end(),
                      std::back_inserter(diff));
  r.stale_in_index = diff.size();
  return r;
}

DatabaseStats Database::Stats() const {
  DatabaseStats s;
  auto m = model();
  if (m) {
    s.model_id = m->embedder->model_id();
    s.dimension = m->embedder->dim();
    s.embed = m->batcher->stats();
  }
  std::vector<std::string> names;
  {
    std::shared_lock<std::shared_mutex> lock(collections_mu_);
    for (auto& [n, c] : collections_) names.push_back(n);
  }
  s.collections = names.size();
  for (auto& n : names) {
    auto count = store_->Count(n);
    if (count.ok()) s.documents += *count;
  }
  s.snapshot_loads = snapshot_loads_;
  s.index_rebuilds = index_rebuilds_;
  s.replayed_changes = replayed_changes_;
  s.snapshots_written = snapshots_written_;
  return s;
}

}  // namespace neodb::api
