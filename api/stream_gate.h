#pragma once
// StreamGate: admission and idle timeout for the ingest streams
// (Documents.BulkIngest, Documents.Ingest).
//
// The streams run on gRPC's callback API (ingest_reactors.h): an open stream
// holds no thread while it waits for its client, so the gate no longer has to
// keep streams below the handler threads. What an open stream still costs is
// a little memory (one message buffered at most, one outstanding read) and a
// place in the worker queue while its batch runs; the gate bounds that:
//  - at most `max_open` streams are open at once, server-wide; one more is
//    answered RESOURCE_EXHAUSTED at once;
//  - at most `max_open_per_key` of them per API key (the auth context's
//    "neodb.key_name", auth_processor.h), so one client cannot take every
//    slot; calls without a key (a server without keys) are not counted per
//    key;
//  - a stream whose client sends (or reads) nothing for `idle_timeout` while
//    the stream waits for it is cancelled (TryCancel: its pending read or
//    write completes with ok=false and the reactor finishes with CANCELLED).
//    One timer thread watches every stream (WatchLoop); no thread is blocked
//    per stream;
//  - per connection, GRPC_ARG_MAX_CONCURRENT_STREAMS (server.cc).
// Batches committed before a stream is cancelled stay committed (each is
// acknowledged on its own; see Documents.Ingest).
//
// Thread-safety: all methods may be called from any thread.

#include <condition_variable>
#include <cstdint>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "grpcpp/grpcpp.h"

namespace neodb::api {

struct StreamGateOptions {
  // Streams open at once, server-wide. Default: 64 (ServerOptions picks 64
  // when this is 0).
  int max_open = 64;
  // Streams open at once under one API key. 0: half of max_open (at least
  // 1). Default: 0.
  int max_open_per_key = 0;
  // A stream with no message from its client for this long is cancelled.
  // Default: 60 s.
  absl::Duration idle_timeout = absl::Seconds(60);
};

class StreamGate {
 public:
  // An admitted stream; the destructor frees the slot. Only time spent
  // waiting for the client counts as idle: call WaitingForClient() before
  // each read (and each write, which waits when the client reads nothing)
  // is started and Working() once it completed. An Upsert that takes longer
  // than the idle timeout is work, not idleness, and is never cancelled.
  class Slot {
   public:
    ~Slot();
    Slot(const Slot&) = delete;
    Slot& operator=(const Slot&) = delete;
    void WaitingForClient();
    void Working();

   private:
    friend class StreamGate;
    struct Entry;
    Slot(StreamGate* gate, std::list<Entry>::iterator it) : gate_(gate), it_(it) {}
    StreamGate* gate_;
    std::list<Entry>::iterator it_;
  };

  // REQUIRES: options.max_open >= 1, options.max_open_per_key >= 0.
  explicit StreamGate(const StreamGateOptions& options);
  ~StreamGate();  // REQUIRES: no Slot alive (the server has stopped)
  StreamGate(const StreamGate&) = delete;
  StreamGate& operator=(const StreamGate&) = delete;

  // A slot for the stream of `ctx` (which must outlive the slot), sent under
  // the API key named `key_name` (empty: no key), or RESOURCE_EXHAUSTED when
  // max_open streams are open, or max_open_per_key under that key.
  absl::StatusOr<std::unique_ptr<Slot>> Admit(grpc::ServerContextBase* ctx,
                                              const std::string& key_name);

  // Blocks until no slot is alive. The server calls it after gRPC's
  // Shutdown (which cancelled every stream), so the gate and the workers
  // outlive every reactor that uses them.
  void WaitUntilNoneOpen();

  int max_open_per_key() const { return max_per_key_; }
  int open() const;
  int64_t refused() const;
  int64_t idle_cancelled() const;

 private:
  void WatchLoop();

  const StreamGateOptions options_;
  const int max_per_key_;
  mutable std::mutex mu_;
  std::condition_variable cv_;         // the watcher's
  std::condition_variable closed_cv_;  // WaitUntilNoneOpen's
  std::list<Slot::Entry> open_;
  std::map<std::string, int> open_per_key_;  // keys with at least one stream
  int64_t refused_ = 0;
  int64_t idle_cancelled_ = 0;
  bool stop_ = false;
  std::thread watcher_;
};

}  // namespace neodb::api
