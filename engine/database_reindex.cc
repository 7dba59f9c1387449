// Database::Reindex: re-embed one collection (with a new model when given)
// beside its live indexes, in bounded memory, then commit and swap.
//
// The new vectors are staged in a hidden store collection, one batch at a
// time (reindex_staging.h), so memory holds one batch whatever the
// collection's size, and a crash before the commit leaves the collection
// wholly on its old model. Writes during the reindex are caught up into the
// staging collection, the last of them under the write lock. The commit
// marks the staging collection, moves its documents in, records the new
// model with the collection, builds fresh indexes and swaps settings and
// indexes together, while searches of this collection wait (commit_mu):
// internal ids change there. Other collections are not touched.
//
// Interrupted reindexes resume. A crash or a shutdown before the commit
// leaves the staging collection in the store, and it is the whole record of
// the job: its spec names the target model (directory, id, precision) and
// the embedding settings, its documents the vectors made so far. Startup
// keeps it and, once open, starts the reindex again towards that model
// (ResumeInterruptedReindexes); the run reuses every staged vector whose
// document still has the same text, so a resumed reindex embeds only what
// it had not done (resuming is cheap here: a staged document carries its
// text, so staleness is a comparison, and the change log the catch-up needs
// is only read from the new scan on). Restarting from nothing would instead
// throw away the expensive part of the work on every crash, and reporting
// FAILED would leave the operator to restart it by hand. Where it cannot
// resume (the target model no longer loads) ReindexStatus says FAILED with
// the reason. A reindex that failed on its own (an I/O error) drops its
// staging collection and is not resumed.
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "engine/database.h"
#include "engine/model_settings.h"
#include "engine/reindex_stager.h"
#include "engine/reindex_staging.h"
#include "common/status_macros.h"
#include "spdlog/spdlog.h"

namespace neodb::engine {
namespace {

// Catch-up rounds outside the write lock before the final one under it; they
// stop early once fewer documents than this changed in a round.
constexpr int kCatchUpRounds = 8;
constexpr size_t kFewChanges = 64;

// Whether the vectors staged under `old` are the ones `now` would make: the
// same model in the same precision, embedding with the same settings. (The
// staging spec copies the collection's embedding settings when created.)
bool SameVectors(const db::CollectionSpec& old, const db::CollectionSpec& now) {
  return old.engine_state.empty() && old.model_id == now.model_id &&
         old.precision == now.precision && old.dimension == now.dimension &&
         old.pooling == now.pooling && old.overflow == now.overflow &&
         old.document_instruction == now.document_instruction;
}

// The collection's settings as they will be on `target`: each one the
// collection holds at its current model's value moves to target's
// (AdoptModelSettings); the rest stay. When the current model's directory
// cannot be read (gone since), nothing is adopted: a setting may have been
// the user's.
absl::StatusOr<CollectionSettings> SettingsOnTarget(const db::CollectionSpec& spec,
                                                    Model& target) {
  db::CollectionSpec next = spec;
  if (!spec.model_dir.empty() && spec.model_dir != target.dir) {
    auto from = encoder::LoadModelDefaults(spec.model_dir);
    if (from.ok()) {
      ASSIGN_OR_RETURN(const ModelSettings was, ModelSettingsOf(*from));
      ASSIGN_OR_RETURN(const ModelSettings will, ModelSettingsOf(target.embedder->defaults()));
      if (AdoptModelSettings(was, will, &next)) {
        spdlog::info("collection '{}': takes the new model's settings (pooling {}, fusion {})",
                     spec.name, next.pooling, next.fusion);
      }
    } else {
      spdlog::warn("collection '{}': keeps its settings on the new model ({})", spec.name,
                   from.status().ToString());
    }
  }
  return ParseSettings(next);
}

// `spec` (the settings already moved: SettingsOnTarget) naming `target`'s
// model, directory and precision: the collection as the reindex leaves it.
db::CollectionSpec SpecOnTarget(const db::CollectionSpec& spec, const Model& target) {
  db::CollectionSpec next = spec;
  next.model_id = target.embedder->model_id();
  next.model_dir = target.dir;
  next.precision = std::string(encoder::PrecisionName(target.embedder->precision()));
  next.engine_state.clear();
  return next;
}

}  // namespace

absl::Status Database::CheckReindex(const std::string& collection) const {
  ASSIGN_OR_RETURN(std::shared_ptr<Collection> c, Find(collection));
  std::shared_ptr<const Collection::State> state = c->state();
  if (state->settings.source == VectorSource::kExternal) {
    return absl::FailedPreconditionError(
        absl::StrCat("collection '", collection, "' holds client-supplied vectors (",
                     state->settings.spec.model_id,
                     "); the server cannot re-embed them: upsert the new vectors instead"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<std::string>> Database::OwnModelDirs(
    const std::string& collection) const {
  ASSIGN_OR_RETURN(std::shared_ptr<Collection> c, Find(collection));
  const std::shared_ptr<const Collection::State> state = c->state();
  const db::CollectionSpec& spec = state->settings.spec;
  std::vector<std::string> dirs;
  for (const std::string* d : {&options_.default_model_dir, &spec.model_dir,
                               &spec.previous_model_dir}) {
    if (!d->empty()) dirs.push_back(*d);
  }
  return dirs;
}

absl::StatusOr<std::shared_ptr<Model>> Database::ReindexTarget(const Collection::State& state,
                                                              const std::string& model_dir) {
  std::shared_ptr<Model> target;
  if (model_dir.empty()) {
    ASSIGN_OR_RETURN(target, ModelOf(state));
  } else {
    // The new model keeps the collection's precision.
    ASSIGN_OR_RETURN(target, models_->Load(model_dir,
                                           encoder::ParsePrecision(state.settings.spec.precision)
                                               .value_or(encoder::Precision::kF32)));
  }
  const db::CollectionSpec& spec = state.settings.spec;
  if (target->embedder->dim() != static_cast<int>(spec.dimension)) {
    return absl::FailedPreconditionError(absl::StrCat(
        "model in ", model_dir, " has dimension ", target->embedder->dim(), "; collection '",
        spec.name, "' has ", spec.dimension, " (create a new collection instead)"));
  }
  return target;
}

absl::StatusOr<db::CollectionSpec> Database::ReindexedSpec(const std::string& collection,
                                                          const std::string& model_dir) {
  RETURN_IF_ERROR(CheckReindex(collection));
  ASSIGN_OR_RETURN(std::shared_ptr<Collection> c, Find(collection));
  std::shared_ptr<const Collection::State> state = c->state();
  ASSIGN_OR_RETURN(std::shared_ptr<Model> target, ReindexTarget(*state, model_dir));
  ASSIGN_OR_RETURN(const CollectionSettings settings,
                   SettingsOnTarget(state->settings.spec, *target));
  return SpecOnTarget(settings.spec, *target);
}

absl::StatusOr<Collection::PreparedWrite> Database::PrepareUpsertAs(
    const db::CollectionSpec& spec, std::vector<DocumentInput> docs, absl::Time deadline) {
  ASSIGN_OR_RETURN(CollectionSettings settings, ParseSettings(spec));
  const Collection::State state{std::move(settings), nullptr};
  ASSIGN_OR_RETURN(std::shared_ptr<Model> m, ModelOf(state));
  return Collection::PrepareWrite(state, m.get(), std::move(docs), options_.max_request_tokens,
                                  deadline, {});
}

absl::Status Database::Reindex(const std::string& collection, const std::string& model_dir) {
  RETURN_IF_ERROR(RefuseIfReplicated(collection, "a reindex"));
  RETURN_IF_ERROR(CheckReindex(collection));
  // A reindex writes a whole staging copy: on a store read-only since a
  // full-disk start, reopen it writable now or refuse at once (not as a
  // failed job later).
  RETURN_IF_ERROR(store_->TryReopenWritable());
  ASSIGN_OR_RETURN(std::shared_ptr<Collection> c, Find(collection));
  // The target model is loaded here, so a bad directory or dimension is the
  // caller's answer rather than a failed job.
  std::shared_ptr<const Collection::State> state = c->state();
  ASSIGN_OR_RETURN(std::shared_ptr<Model> target, ReindexTarget(*state, model_dir));
  bool running = false, same = false;
  c->UpdateReindex([&](ReindexProgress& p) {
    running = p.state == ReindexProgress::State::kRunning;
    same = running && p.model_id == target->embedder->model_id();
    if (running) return;
    p = ReindexProgress();
    p.state = ReindexProgress::State::kRunning;
    p.model_id = target->embedder->model_id();  // from the start: ReindexStatus names it
  });
  // The same request again (a client retrying, or one that finds the reindex
  // a restart resumed) joins the running job.
  if (same) return absl::OkStatus();
  if (running) {
    return absl::FailedPreconditionError(absl::StrCat(
        "collection '", collection, "' is already being reindexed (to another model)"));
  }
  std::lock_guard<std::mutex> lock(reindex_mu_);
  ++reindex_running_;
  reindex_threads_.emplace_back([this, c, target] { ReindexJob(c, target); });
  return absl::OkStatus();
}

void Database::ResumeInterruptedReindexes() {
  for (const db::CollectionSpec& staging : interrupted_reindexes_) {
    const std::string name = TargetOf(staging.name);
    spdlog::warn("collection '{}': resuming the reindex a restart interrupted (model {})", name,
                 staging.model_id);
    absl::Status s = Reindex(name, staging.model_dir);
    if (s.ok()) continue;
    spdlog::error("collection '{}': the interrupted reindex cannot resume: {}", name, s.ToString());
    (void)store_->DropCollection(staging.name);
    if (auto c = Find(name); c.ok()) {
      (*c)->UpdateReindex([&](ReindexProgress& p) {
        p = ReindexProgress();
        p.state = ReindexProgress::State::kFailed;
        p.model_id = staging.model_id;
        p.error = absl::StrCat("a restart interrupted the reindex to model ", staging.model_id,
                               " (", staging.model_dir, ") and it cannot resume: ", s.message(),
                               "; the collection stays on its model, start the reindex again");
      });
    }
  }
  interrupted_reindexes_.clear();
}

void Database::ReindexJob(std::shared_ptr<Collection> c, std::shared_ptr<Model> target) {
  absl::Status s = ReindexRun(*c, *target);
  if (!s.ok()) spdlog::error("reindex of '{}' failed: {}", c->name(), s.ToString());
  c->UpdateReindex([&](ReindexProgress& p) {
    p.state = s.ok() ? ReindexProgress::State::kDone : ReindexProgress::State::kFailed;
    p.error = std::string(s.message());
  });
  std::lock_guard<std::mutex> lock(reindex_mu_);
  --reindex_running_;
  reindex_cv_.notify_all();
}

void Database::WaitForReindex() const {
  std::unique_lock<std::mutex> lock(reindex_mu_);
  reindex_cv_.wait(lock, [&] { return reindex_running_ == 0; });
}

absl::StatusOr<ReindexProgress> Database::GetReindexProgress(const std::string& collection) const {
  ASSIGN_OR_RETURN(std::shared_ptr<Collection> c, Find(collection));
  return c->reindex();
}

absl::Status Database::ReindexRun(Collection& c, Model& target) {
  std::shared_ptr<const Collection::State> state = c.state();
  ASSIGN_OR_RETURN(const CollectionSettings settings,
                   SettingsOnTarget(state->settings.spec, target));
  const db::CollectionSpec& spec = settings.spec;
  const std::string& name = spec.name;
  const std::string target_id = target.embedder->model_id();
  c.UpdateReindex([&](ReindexProgress& p) { p.model_id = target_id; });
  const encoder::EmbedOptions opts = EmbedOptionsFor(settings, spec.document_instruction);

  // Keep the change log from here on: the catch-up reads it.
  struct PinGuard {
    Database* d;
    uint64_t pin;
    bool done = false;
    void Release() {
      if (!done) d->Unpin(pin);
      done = true;
    }
    ~PinGuard() { Release(); }
  } unpin{this, Pin()};

  const std::string staging = StagingName(name);
  db::CollectionSpec staging_spec = SpecOnTarget(spec, target);
  staging_spec.name = staging;
  staging_spec.created_at_micros = 0;
  // The staging collection of an interrupted attempt at the same vectors is
  // kept (its vectors are reused below); any other is replaced.
  bool resume = false;
  if (auto old = store_->GetCollection(staging); old.ok()) {
    resume = SameVectors(*old, staging_spec);
    if (!resume) RETURN_IF_ERROR(store_->DropCollection(staging));
  }
  if (!resume) RETURN_IF_ERROR(store_->CreateCollection(staging_spec));
  bool committed = false;
  // Dropped on failure, so a failed reindex is not resumed; kept when the
  // server is shutting down, so the next start resumes it.
  struct DropStaging {
    Database* d;
    const std::string& staging;
    const bool& committed;
    ~DropStaging() {
      if (!committed && !d->Stopping()) (void)d->store_->DropCollection(staging);
    }
  } drop_staging{this, staging, committed};

  ASSIGN_OR_RETURN(uint64_t total, store_->Count(name));
  c.UpdateReindex([&](ReindexProgress& p) { p.total = total; });
  ReindexStager stager(
      *store_, name, staging, target, opts,
      [&c](uint64_t done) { c.UpdateReindex([&](ReindexProgress& p) { p.done = done; }); },
      [this] { return Stopping(); });
  // Stage 1: the collection through the encoder into staging.
  RETURN_IF_ERROR(stager.Scan(resume));
  // Stage 2: documents written since the scan, until few are left.
  for (int round = 0; round < kCatchUpRounds; ++round) {
    ASSIGN_OR_RETURN(size_t n, stager.CatchUp(store_->LastSequence()));
    if (n < kFewChanges) break;
    if (Stopping()) return absl::CancelledError("server is shutting down");
  }

  // Stage 3: commit, with this collection's writes held still (the others'
  // go on).
  std::lock_guard<std::mutex> wlock(c.write_mu());
  ASSIGN_OR_RETURN(std::shared_ptr<Collection> now, Find(name));
  if (now.get() != &c) return absl::AbortedError("collection was dropped during the reindex");
  RETURN_IF_ERROR(stager.CatchUp(store_->LastSequence()).status());
  // Unpinned only after that last read of the log: a snapshot round that
  // already passed this collection may trim while we hold its lock.
  unpin.Release();
  db::CollectionUpdate mark;
  mark.engine_state = std::string(kCommitMarker);
  ASSIGN_OR_RETURN(db::CollectionSpec marked, store_->UpdateCollection(staging, mark));
  committed = true;  // from here a restart finishes the commit
  c.UpdateReindex([&](ReindexProgress& p) { p.committed = true; });
  {
    absl::WriterMutexLock commit(&c.commit_mu());
    const absl::Duration pause = options_.test_commit_chunk_delay;
    absl::Status s = RollForward(*store_, marked, [pause] {
      if (pause > absl::ZeroDuration()) absl::SleepFor(pause);
    });
    if (s.ok()) {
      auto stored = store_->GetCollection(name);
      s = stored.status();
      if (s.ok()) {
        auto next = ParseSettings(*stored);
        s = next.status();
        std::shared_ptr<IndexSet> indexes;
        if (s.ok()) {
          auto made = IndexSet::Make(*next);
          s = made.status();
          if (s.ok()) indexes = std::move(*made);
        }
        if (s.ok()) s = FillFromStore(name, *indexes, nullptr);
        if (s.ok()) c.Swap(std::move(*next), std::move(indexes));
      }
    }
    if (!s.ok()) {
      c.needs_rebuild = true;
      return absl::InternalError(absl::StrCat("reindex of '", name,
                                              "' committed but could not be applied (", s.message(),
                                              "); restart the server to finish it"));
    }
  }
  ++index_rebuilds_;
  c.UpdateReindex([&](ReindexProgress& p) { p.done = p.total; });
  spdlog::info("collection '{}' is now on model {}", name, target_id);
  // Its snapshots are of the old model's indexes (they no longer load):
  // write its new ones now, under the lock still held. The next snapshot
  // round trims the log.
  RETURN_IF_ERROR(c.SaveSnapshot(env_, SnapshotDir(name), store_->LastSequence(),
                                 options_.snapshots_kept));
  ++snapshots_written_;
  return absl::OkStatus();
}

}  // namespace neodb::engine
