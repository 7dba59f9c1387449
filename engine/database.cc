// Database: opening and closing, collections, stats.
// Startup and rebuilds: database_startup.cc. Writes: database_write.cc.
// Reads and searches: database_search.cc. Snapshots, maintenance, Verify:
// database_maintenance.cc. Reindex: database_reindex.cc.
#include "engine/database.h"

#include <filesystem>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "engine/model_settings.h"
#include "engine/reindex_staging.h"
#include "common/fault_env.h"
#include "common/status_macros.h"
#include "encoder/ops/cpu_kernels.h"
#include "index/index_factory.h"
#include "index/keyword/fusion.h"
#include "spdlog/spdlog.h"

namespace neodb::engine {
namespace fs = std::filesystem;

absl::StatusOr<std::unique_ptr<Database>> Database::Open(const DatabaseOptions& options,
                                                         std::unique_ptr<Embedder> default_model) {
  if (options.data_dir.empty()) return absl::InvalidArgumentError("data_dir is empty");
  NEODB_CHECK(default_model != nullptr);
  std::unique_ptr<Database> d(new Database());
  d->options_ = options;
  d->env_ = options.env != nullptr ? options.env : Env::Default();
  // Before the test twins wrap env_: the directories exist before any write
  // a fault test counts.
  RETURN_IF_ERROR(d->env_->CreateDir((fs::path(options.data_dir) / "snapshots").string()));
  if (options.test_faults != nullptr) {
    d->fault_env_ = std::make_unique<FaultInjectionEnv>(d->env_, options.test_faults);
    d->env_ = d->fault_env_.get();
  }
  if (options.test_snapshot_pause_at > 0) {
    d->pausing_env_ = std::make_unique<PausingEnv>(d->env_);
    d->env_ = d->pausing_env_.get();
  }
  ASSIGN_OR_RETURN(d->lock_, DataDirLock::Acquire(options.data_dir));
  db::StoreOptions so;
  so.sync_writes = options.sync_writes;
  so.block_cache_bytes = options.store_block_cache_bytes;
  so.memtable_bytes = options.store_memtable_bytes;
  d->memory_budget_ = std::make_unique<MemoryBudget>(options.max_memory_bytes);
  so.test_faults = options.test_faults;
  ASSIGN_OR_RETURN(d->store_, db::Store::Open((fs::path(options.data_dir) / "store").string(), so));
  ModelRegistryOptions mo;
  mo.max_bytes = options.max_model_bytes;
  mo.batcher = options.batcher;
  d->models_ = std::make_unique<ModelRegistry>(options.embedder_factory, mo);
  d->models_->SetDefault(std::move(default_model), options.default_model_dir,
                         options.default_precision);
  RETURN_IF_ERROR(d->Startup());
  // A read-only store (a full disk) cannot take a reindex's writes: it
  // resumes once the store is writable again (ProbeWritable).
  d->reindexes_deferred_ = d->store_->read_only() && !d->interrupted_reindexes_.empty();
  d->maintenance_ = std::thread([p = d.get()] { p->MaintenanceLoop(); });
  if (!d->reindexes_deferred_) d->ResumeInterruptedReindexes();
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
    std::lock_guard<std::mutex> lock(snapshot_mu_);
    s = SnapshotAll().status();
  }
  // Open may have failed before the store opened (e.g. the directory is locked).
  absl::Status f = store_ ? store_->Flush() : absl::OkStatus();
  if (models_) models_->Clear();  // stops the batchers' workers
  return s.ok() ? f : s;
}

std::string Database::SnapshotDir(const std::string& name) const {
  return (fs::path(options_.data_dir) / "snapshots" / name).string();
}

absl::StatusOr<std::shared_ptr<Collection>> Database::Find(const std::string& name) const {
  std::shared_lock<std::shared_mutex> lock(collections_mu_);
  auto it = collections_.find(name);
  if (it == collections_.end()) {
    return absl::NotFoundError(absl::StrCat("collection '", name, "' does not exist"));
  }
  return it->second;
}

absl::StatusOr<std::shared_ptr<Collection>> Database::FindLocked(
    const std::string& name, std::unique_lock<std::mutex>* lock) const {
  while (true) {
    ASSIGN_OR_RETURN(std::shared_ptr<Collection> c, Find(name));
    std::unique_lock<std::mutex> l(c->write_mu());
    // Dropped (and perhaps created again) while we waited: take the new one.
    if (c->dropped) continue;
    *lock = std::move(l);
    return c;
  }
}

std::vector<std::shared_ptr<Collection>> Database::AllCollections() const {
  std::shared_lock<std::shared_mutex> lock(collections_mu_);
  std::vector<std::shared_ptr<Collection>> out;
  for (const auto& [name, c] : collections_) out.push_back(c);
  return out;
}

absl::StatusOr<std::shared_ptr<Model>> Database::ModelOf(const Collection::State& state) const {
  const db::CollectionSpec& spec = state.settings.spec;
  if (!state.settings.HasModel()) {
    return absl::FailedPreconditionError(
        absl::StrCat("collection '", spec.name, "' holds client-supplied vectors (", spec.model_id,
                     ") and has no query model, so no model can embed text for it: search it with "
                     "near-vector, or create it with a query model whose vectors these are"));
  }
  absl::StatusOr<encoder::Precision> precision = encoder::ParsePrecision(spec.precision);
  if (!precision.ok()) {
    return absl::DataLossError(
        absl::StrCat("collection '", spec.name,
                     "' records an unknown precision: ", precision.status().message()));
  }
  auto m = models_->Acquire(spec.model_dir, spec.model_id, *precision);
  if (!m.ok() && absl::IsFailedPrecondition(m.status())) {
    return absl::FailedPreconditionError(
        absl::StrCat("collection '", spec.name, "' cannot embed: ", m.status().message(),
                     " (`neodb reindex --collection ", spec.name, " --model DIR`)"));
  }
  return m;
}

// --- Collections ------------------------------------------------------------

namespace {

// Names of external vectors: printable, no spaces, short.
absl::Status CheckVectorsName(const std::string& name) {
  if (name.empty() || name.size() > 128) {
    return absl::InvalidArgumentError(
        absl::StrCat("vectors name is ", name.size(), " characters; it must be 1..128"));
  }
  for (char ch : name) {
    bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
              ch == '_' || ch == '-' || ch == '.' || ch == ':' || ch == '/';
    if (!ok) {
      return absl::InvalidArgumentError(
          "vectors name may contain only letters, digits and '_', '-', '.', ':', '/'");
    }
  }
  return absl::OkStatus();
}

// What a request left unsaid, the model's directory decides
// (ModelSettingsOf): an empty pooling becomes the model's own, a collection
// that names neither instruction takes the model's prompts (E5's "query: " /
// "passage: ", BGE's query instruction), since its vectors only mean what they
// should with them, and one that names no fusion the model's (neodb_model.json),
// else adaptive.
absl::Status TakeModelDefaults(const encoder::ModelDefaults& d, db::CollectionSpec* spec) {
  ASSIGN_OR_RETURN(const ModelSettings m, ModelSettingsOf(d));
  if (spec->pooling.empty()) spec->pooling = m.pooling;
  if (spec->query_instruction.empty() && spec->document_instruction.empty()) {
    spec->query_instruction = m.query_instruction;
    spec->document_instruction = m.document_instruction;
  }
  if (spec->fusion.empty()) {
    spec->fusion = m.fusion;
    spec->fusion_alpha = m.fusion_alpha;
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<CollectionInfo> Database::CreateCollection(db::CollectionSpec spec) {
  return CreateCollection(std::move(spec), VectorOptions());
}

absl::StatusOr<CollectionInfo> Database::CreateCollection(db::CollectionSpec spec,
                                                          const VectorOptions& vectors) {
  if (IsStagingName(spec.name)) {
    return absl::InvalidArgumentError(absl::StrCat("collection names beginning with '",
                                                   std::string(kStagingPrefix), "' are reserved"));
  }
  if (spec.name.size() > kMaxUserCollectionNameBytes) {
    return absl::InvalidArgumentError(absl::StrCat("collection name is ", spec.name.size(),
                                                   " bytes; the limit is ",
                                                   kMaxUserCollectionNameBytes));
  }
  spec.vector_source = std::string(VectorSourceName(vectors.source));
  std::shared_ptr<Model> def = models_->Default();
  if (!def) return absl::UnavailableError("server is shutting down");
  // The precision of the collection's model: asked for, else the server's
  // default (the default model's).
  encoder::Precision precision = def->precision;
  if (!spec.precision.empty()) {
    ASSIGN_OR_RETURN(precision, encoder::ParsePrecision(spec.precision));
  }
  // `m` in that precision: m itself when it runs it (or was asked for it and
  // this CPU lacks it); else a second copy of its checkpoint.
  auto in_precision = [&](std::shared_ptr<Model> m) -> absl::StatusOr<std::shared_ptr<Model>> {
    if (precision == m->precision || precision == m->embedder->precision()) return m;
    if (m->dir.empty()) {
      return absl::FailedPreconditionError(absl::StrCat(
          "precision ", std::string(encoder::PrecisionName(precision)),
          " needs the default model loaded again, but it has no checkpoint directory"));
    }
    return models_->Load(m->dir, precision);
  };
  if (vectors.source == VectorSource::kModel) {
    if (vectors.dimension != 0 || !vectors.name.empty() || !vectors.query_model.empty()) {
      return absl::InvalidArgumentError(
          "dimension, vectors name and query model apply to external-vector collections only "
          "(the model's own dimension and id are used)");
    }
    ASSIGN_OR_RETURN(std::shared_ptr<Model> m, in_precision(def));
    spec.dimension = static_cast<uint32_t>(m->embedder->dim());
    spec.model_id = m->embedder->model_id();
    spec.model_dir = m->dir;
    RETURN_IF_ERROR(TakeModelDefaults(m->embedder->defaults(), &spec));
    // What the vectors are computed in (F32 where the CPU lacks the asked one).
    spec.precision = std::string(encoder::PrecisionName(m->embedder->precision()));
  } else {
    if (vectors.dimension < 1 || vectors.dimension > db::kMaxDimension) {
      return absl::InvalidArgumentError(
          absl::StrCat("an external-vector collection needs a dimension in 1..", db::kMaxDimension,
                       " (got ", vectors.dimension, ")"));
    }
    if (!vectors.name.empty()) RETURN_IF_ERROR(CheckVectorsName(vectors.name));
    spec.dimension = vectors.dimension;
    if (vectors.query_model.empty()) {
      // No model ever embeds for it: recorded as f32, whatever was asked.
      spec.model_id =
          absl::StrCat(kExternalModelPrefix, vectors.name.empty() ? spec.name : vectors.name);
      spec.model_dir.clear();
      spec.precision = std::string(encoder::PrecisionName(encoder::Precision::kF32));
    } else {
      std::shared_ptr<Model> q;
      if (vectors.query_model == "default") {
        ASSIGN_OR_RETURN(q, in_precision(def));
      } else {
        ASSIGN_OR_RETURN(q, models_->Load(vectors.query_model, precision));
      }
      if (q->embedder->dim() != static_cast<int>(vectors.dimension)) {
        return absl::InvalidArgumentError(absl::StrCat(
            "query model '", vectors.query_model, "' has dimension ", q->embedder->dim(),
            "; the collection's vectors have ", vectors.dimension));
      }
      // Near-text compares a query embedded by this model with the stored
      // vectors: only meaningful when they are that model's too.
      if (!vectors.name.empty() && vectors.name != q->embedder->model_id()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "the vectors are named '", vectors.name, "' but the query model's id is '",
            q->embedder->model_id(),
            "': with a query model the vectors must be that model's (name them by its id, "
            "or leave the name empty)"));
      }
      spec.model_id = q->embedder->model_id();
      spec.model_dir = q->dir;
      RETURN_IF_ERROR(TakeModelDefaults(q->embedder->defaults(), &spec));
      spec.precision = std::string(encoder::PrecisionName(q->embedder->precision()));
    }
  }
  // No model decides for client vectors without a query model: mean, as before.
  if (spec.pooling.empty()) spec.pooling = std::string(PoolingName(encoder::Pooling::kMean));
  if (spec.fusion.empty()) spec.fusion = std::string(keyword::FusionMethodName(keyword::FusionOptions{}.method));
  return CreateResolved(std::move(spec));
}

absl::StatusOr<CollectionInfo> Database::CreateCollectionAs(db::CollectionSpec spec) {
  if (IsStagingName(spec.name) || spec.name.size() > kMaxUserCollectionNameBytes) {
    return absl::InvalidArgumentError(absl::StrCat("'", spec.name, "' is not a collection name"));
  }
  ASSIGN_OR_RETURN(CollectionSettings settings, ParseSettings(spec));
  if (settings.HasModel()) {
    // Its model loads here, and is the one the spec names.
    const Collection::State state{std::move(settings), nullptr};
    RETURN_IF_ERROR(ModelOf(state).status());
  }
  return CreateResolved(std::move(spec));
}

absl::StatusOr<CollectionInfo> Database::CreateResolved(db::CollectionSpec spec) {
  spec.engine_state.clear();
  ASSIGN_OR_RETURN(CollectionSettings settings, ParseSettings(spec));
  RETURN_IF_ERROR(index::ValidateIndexSpec(spec.index_spec, static_cast<int>(spec.dimension)));
  ASSIGN_OR_RETURN(std::shared_ptr<IndexSet> indexes, IndexSet::Make(settings));
  // No collection lock: nothing writes a collection before it is registered.
  std::lock_guard<std::mutex> ddl(ddl_mu_);
  {
    std::shared_lock<std::shared_mutex> lock(collections_mu_);
    if (collections_.count(spec.name)) {
      return absl::AlreadyExistsError(absl::StrCat("collection '", spec.name, "' already exists"));
    }
    if (collections_.size() >= options_.max_collections) {
      return absl::ResourceExhaustedError(
          absl::StrCat("the database holds ", collections_.size(),
                       " collections, its limit (--max-collections); drop one first"));
    }
  }
  // Leftovers of a dropped collection of the same name must never load: if
  // they cannot be removed, the collection is not created.
  RETURN_IF_ERROR(env_->DeleteTree(SnapshotDir(spec.name)));
  RETURN_IF_ERROR(store_->CreateCollection(spec));
  ASSIGN_OR_RETURN(db::CollectionSpec stored, store_->GetCollection(spec.name));
  settings.spec = stored;
  auto c = std::make_shared<Collection>(*store_, settings, indexes);
  CollectionInfo info{stored, 0, 0, indexes->vector().index().spec(), {}};
  std::unique_lock<std::shared_mutex> lock(collections_mu_);
  collections_[spec.name] = std::move(c);
  return info;
}

absl::Status Database::DropCollection(const std::string& name) {
  RETURN_IF_ERROR(RefuseIfReplicated(name, "dropping it"));
  std::lock_guard<std::mutex> ddl(ddl_mu_);
  ASSIGN_OR_RETURN(std::shared_ptr<Collection> c, Find(name));
  if (c->reindex().state == ReindexProgress::State::kRunning) {
    return absl::FailedPreconditionError(
        absl::StrCat("collection '", name, "' is being reindexed; drop it afterwards"));
  }
  std::lock_guard<std::mutex> wlock(c->write_mu());
  return DropLocked(*c);
}

absl::Status Database::DropReplicatedCopy(const std::string& name) {
  std::lock_guard<std::mutex> ddl(ddl_mu_);
  ASSIGN_OR_RETURN(std::shared_ptr<Collection> c, Find(name));
  {
    std::lock_guard<std::mutex> wlock(c->write_mu());
    RETURN_IF_ERROR(DropLocked(*c));
  }
  std::lock_guard<std::mutex> lock(replicated_mu_);
  replicated_.erase(name);
  return absl::OkStatus();
}

absl::Status Database::DropLocked(Collection& c) {
  const std::string name = c.name();
  RETURN_IF_ERROR(store_->DropCollection(name));
  // A reindex that was interrupted and could not resume may have left its
  // staging collection; it must not outlive the collection.
  if (store_->GetCollection(StagingName(name)).ok()) {
    RETURN_IF_ERROR(store_->DropCollection(StagingName(name)));
  }
  // Whoever waits for its write lock now finds it dropped (FindLocked).
  c.dropped = true;
  {
    std::unique_lock<std::shared_mutex> lock(collections_mu_);
    collections_.erase(name);
  }
  // The drop is committed; snapshots left behind are removed by the next
  // creation of this name (above) and never load meanwhile (no collection).
  if (absl::Status s = env_->DeleteTree(SnapshotDir(name)); !s.ok()) {
    spdlog::warn("collection '{}' dropped; its snapshots stay until the name is reused: {}", name,
                 s.ToString());
  }
  return absl::OkStatus();
}

absl::StatusOr<CollectionInfo> Database::DescribeCollection(const std::string& name) const {
  ASSIGN_OR_RETURN(std::shared_ptr<Collection> c, Find(name));
  auto state = c->state();
  CollectionInfo info;
  info.spec = state->settings.spec;
  info.index_size = state->indexes->vector().size();
  info.index_spec = state->indexes->vector().index().spec();
  const KeywordPart& kw = state->indexes->keyword();
  const keyword::KeywordStats ks = kw.index().Stats();
  info.keyword = {ks.documents, ks.terms, ks.postings, ks.memory_bytes, kw.snapshot_bytes()};
  ASSIGN_OR_RETURN(info.count, store_->Count(name));
  return info;
}

absl::StatusOr<CollectionInfo> Database::SetDefaultFusion(const std::string& name,
                                                          const std::string& fusion, double alpha) {
  {
    std::unique_lock<std::mutex> wlock;
    ASSIGN_OR_RETURN(std::shared_ptr<Collection> c, FindLocked(name, &wlock));
    db::CollectionSpec next = c->state()->settings.spec;
    next.fusion = fusion;
    next.fusion_alpha = alpha;
    ASSIGN_OR_RETURN(CollectionSettings settings, ParseSettings(next));
    db::CollectionUpdate u;
    u.fusion = fusion;
    u.fusion_alpha = alpha;
    RETURN_IF_ERROR(store_->UpdateCollection(name, u).status());
    c->SwapSettings(std::move(settings));
  }
  return DescribeCollection(name);
}

absl::StatusOr<std::vector<CollectionInfo>> Database::ListCollections() const {
  std::vector<CollectionInfo> out;
  for (const auto& c : AllCollections()) {
    auto info = DescribeCollection(c->name());
    if (info.ok()) out.push_back(std::move(*info));  // dropped meanwhile: skip
  }
  return out;
}

absl::Status Database::Compact() { return store_->Compact(); }

DatabaseStats Database::Stats() const {
  DatabaseStats s;
  if (auto m = models_->Default()) {
    s.model_id = m->embedder->model_id();
    s.dimension = m->embedder->dim();
    s.embed = m->batcher->stats();
    s.device = m->embedder->device();
  }
  s.cpu_kernels = encoder::CpuKernelInfo();
  auto all = AllCollections();
  s.collections = all.size();
  for (auto& c : all) {
    auto count = store_->Count(c->name());
    if (count.ok()) s.documents += *count;
  }
  s.snapshot_loads = snapshot_loads_;
  s.index_rebuilds = index_rebuilds_;
  s.replayed_changes = replayed_changes_;
  s.snapshots_written = snapshots_written_;
  s.models_loaded = models_->loaded();
  s.keyword_snapshot_loads = keyword_snapshot_loads_;
  s.keyword_rebuilds = keyword_rebuilds_;
  if (absl::Status w = store_->WriteState(); !w.ok()) s.read_only_reason = std::string(w.message());
  return s;
}

absl::StatusOr<uint64_t> Database::StoreIntProperty(const std::string& name) const {
  return store_->IntProperty(name);
}

}  // namespace neodb::engine
