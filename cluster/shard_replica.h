#pragma once
// ShardReplica: this node's copy of one shard of a collection, kept up to date
// from the shard's stream (shard_log.h) through the engine.
//
// The position is the store's: each run of changes is committed by
// Database::ApplyReplicated* together with the stream sequence of its last
// change (db::SourcePosition, source = the stream's name), so after a crash
// the replica resumes right after the last change its store kept: none is
// applied twice, none skipped. That is why the consumer is not durable: an
// ordered (ephemeral, flow-controlled, gap-checked) consumer is created from
// the stored position whenever the replica (re)subscribes, and JetStream
// holds no second copy of the position that could disagree with the store.
//
// A new replica starts at position 0 and reads the whole compacted stream.
// The stream is checked too, not trusted: nats-server 2.9 was seen to lose,
// after a server was killed, changes its consumer had already delivered, and
// to give their sequences to new changes (README, "Beyond one machine"). A
// replica that finds the stream behind its position, or another message at
// the sequence of the last change it applied, resynchronises: it deletes its
// copy of the shard and reads the stream again from the first message (one
// store batch, position 0), so it converges on what the stream holds. It
// checks when it has been quiet for a while and in CatchUp.
//
// A change that cannot be applied (a malformed message, a vector of another
// model, a store error) is never skipped: the replica reports it (status())
// and retries from its position, so it stops there until the cause is
// fixed, and the others go on.
//
// Thread-safety: all methods are safe to call concurrently.

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "cluster/background_loop.h"
#include "cluster/nats_client.h"
#include "engine/database.h"

namespace neodb::cluster {

class ShardReplica {
 public:
  // `db` holds the collection (created with the collection's spec, same
  // model); the replica reads the shard's stream of `log`, the collection's
  // current log (shard_map.h's LogName). `db` and `nats` outlive the replica.
  ShardReplica(engine::Database* db, const NatsClient* nats, std::string collection,
               std::string log, uint32_t shard, uint32_t shards);
  ~ShardReplica();
  ShardReplica(const ShardReplica&) = delete;
  ShardReplica& operator=(const ShardReplica&) = delete;

  // Applies what the stream holds, waiting up to `wait` for the first
  // change; returns how many changes it applied (0: none came).
  absl::StatusOr<size_t> Poll(absl::Duration wait);
  // Returns once the replica has applied the stream up to `sequence`
  // (a write's consistency token); DEADLINE_EXCEEDED after `timeout`.
  absl::Status WaitFor(uint64_t sequence, absl::Duration timeout);
  // Applies until caught up with the stream's last sequence as of the call.
  absl::Status CatchUp(absl::Duration timeout);

  // Stops, then deletes this node's copy of the shard (and its position) in
  // one store batch: the shard was placed elsewhere (a rebalance).
  absl::Status DropCopy();

  // Polls in a background thread until Stop (or destruction).
  void Start();
  void Stop();

  // The stream sequence of the last change applied (from the store at start).
  uint64_t position() const { return position_.load(); }
  // Changes applied since this replica started (its apply rate's counter).
  uint64_t applied() const { return applied_.load(); }
  // How often this replica found its stream diverged and resynchronised.
  uint64_t resyncs() const { return resyncs_.load(); }
  // Whether this copy answers reads: it was kept across a restart, or it has
  // applied its stream up to the stream's last change at least once (a new
  // replica reading the stream from its start is not, so a fan-out asks
  // another node for the shard meanwhile).
  bool ready() const { return ready_.load(); }
  // OK, or why the last attempt to apply failed.
  absl::Status status() const;
  const std::string& stream() const { return stream_; }
  const std::string& log() const { return log_; }

 private:
  absl::Status LoadPosition();
  absl::Status Subscribe();
  void Unsubscribe();
  absl::StatusOr<size_t> PollLocked(absl::Duration wait);
  // Whether the stream, whose last sequence is `last`, no longer holds what
  // this replica applied (see above).
  absl::StatusOr<bool> DivergedLocked(uint64_t last);
  // Deletes this node's copy of the shard and starts again from position 0.
  absl::Status ResyncLocked();
  // The documents of this node's copy of the shard, and their deletion
  // with position 0 in one store batch.
  absl::Status DeleteCopyLocked(size_t* deleted);
  void Run();

  engine::Database* const db_;
  const NatsClient* const nats_;
  const std::string collection_;
  const std::string log_;
  const uint32_t shard_;
  const uint32_t shards_;
  const std::string stream_;

  std::mutex poll_mu_;  // one poll at a time; guards sub_ and loaded_
  natsSubscription* sub_ = nullptr;
  std::atomic<bool> loaded_{false};
  // When the last poll that got no message began a quiet spell (guarded by
  // poll_mu_): see PollLocked's watchdog.
  absl::Time quiet_since_ = absl::InfiniteFuture();
  std::atomic<uint64_t> position_{0};
  // The de-duplication id of the message at position_ when this replica
  // applied it (guarded by poll_mu_; empty when not known: after a restart).
  std::string tip_id_;
  std::atomic<uint64_t> resyncs_{0};
  std::atomic<uint64_t> applied_{0};
  std::atomic<bool> ready_{false};

  mutable std::mutex mu_;  // guards status_; cv_ signals position changes and Stop
  std::condition_variable cv_;
  absl::Status status_;
  BackgroundLoop loop_;  // Run: the polls of Start
};

}  // namespace neodb::cluster
