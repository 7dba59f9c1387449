#pragma once
// StreamGate: admission and idle timeout for the client-streaming handlers
// (Documents.BulkIngest, Documents.Ingest).
//
// Why not gRPC's callback API: every handler's work blocks by nature (see
// services.h), and what an open stream costs in the sync API is a handler
// thread while it waits for the client's next message. Three bounds make that
// cost harmless instead:
//  - at most `max_open` streams run at once, server-wide; one more is
//    answered RESOURCE_EXHAUSTED at once. With max_open below the handler
//    threads (ServerOptions), unary calls always find a thread;
//  - a stream whose client sends (or reads) nothing for `idle_timeout`
//    while the handler waits for it is cancelled
//    (TryCancel: its blocked Read returns false, the handler returns and the
//    client sees CANCELLED), so idle streams cannot hold their slots forever;
//  - per connection, GRPC_ARG_MAX_CONCURRENT_STREAMS (server.cc).
// Batches committed before a stream is cancelled stay committed (each is
// acknowledged on its own; see Documents.Ingest).
//
// Thread-safety: all methods may be called from any thread.

#include <condition_variable>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <thread>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "grpcpp/grpcpp.h"

namespace neodb::api {

struct StreamGateOptions {
  // Streams open at once, server-wide. Default: 8 (half the server's
  // default threads; ServerOptions picks half its threads when this is 0).
  int max_open = 8;
  // A stream with no message from its client for this long is cancelled.
  // Default: 60 s.
  absl::Duration idle_timeout = absl::Seconds(60);
};

class StreamGate {
 public:
  // An admitted stream; the destructor frees the slot. Only time spent
  // waiting for the client counts as idle: call WaitingForClient() before
  // each Read (and each Write, which blocks when the client reads nothing)
  // and Working() once it returned. An Upsert that takes longer than the
  // idle timeout is work, not idleness, and is never cancelled.
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

  explicit StreamGate(const StreamGateOptions& options);
  ~StreamGate();  // REQUIRES: no Slot alive (the server has stopped)
  StreamGate(const StreamGate&) = delete;
  StreamGate& operator=(const StreamGate&) = delete;

  // A slot for the stream of `ctx` (which must outlive the slot), or
  // RESOURCE_EXHAUSTED when max_open streams are open.
  absl::StatusOr<std::unique_ptr<Slot>> Admit(grpc::ServerContext* ctx);

  int open() const;
  int64_t refused() const;
  int64_t idle_cancelled() const;

 private:
  void WatchLoop();

  const StreamGateOptions options_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::list<Slot::Entry> open_;
  int64_t refused_ = 0;
  int64_t idle_cancelled_ = 0;
  bool stop_ = false;
  std::thread watcher_;
};

}  // namespace neodb::api
