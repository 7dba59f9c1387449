#pragma once
// The ingest streams (Documents.BulkIngest, Documents.Ingest) on gRPC's
// callback API.
//
// Why: on the sync API an open stream held a handler thread for as long as
// its client kept it open, so idle streams could take every thread from
// every client (issue 19). A reactor holds no thread between messages: reads
// and writes are asynchronous, and gRPC calls the reactor back when one
// completes.
//
// Each reactor (thread-compatible; gRPC and one worker take turns, never
// overlap):
//  - on creation passes the StreamGate (server-wide and per-key caps; idle
//    timer) or finishes at once with RESOURCE_EXHAUSTED; then starts its
//    first read;
//  - OnReadDone runs on gRPC's callback thread and must not block, so it
//    only hands the batch to the stream workers. The worker validates, embeds
//    and stores it (document_batch.h), then starts the next read (Ingest:
//    writes the ack first, and reads on when the write completed). One
//    read or one batch outstanding per stream at a time: a client faster
//    than the server is held back by HTTP/2 flow control, not by a queue;
//  - a failed batch finishes the stream with that batch's status, naming
//    how many documents of earlier batches were committed (they stay);
//  - the client's half-close finishes it OK (BulkIngest sends its totals);
//    its cancellation, a lost connection or the idle timer (TryCancel) make
//    the pending read or write fail, and the stream finishes CANCELLED. A
//    batch already running sees the cancellation through CancelOf and stops
//    at the encoder's next pass.
// The gate slot is freed in OnDone, when gRPC is done with the call.

#include "cluster/cluster_node.h"
#include "engine/database.h"
#include "api/service_limits.h"
#include "api/stream_gate.h"
#include "api/worker_pool.h"
#include "grpcpp/grpcpp.h"
#include "neodb/v1/neodb.pb.h"

namespace neodb::api {

// What the reactors use; outlives every stream (the server's Shutdown waits
// for all of them to be done). None of it owned.
struct IngestStreamEnv {
  engine::Database* db = nullptr;
  cluster::ClusterNode* cluster = nullptr;  // sharded collections go through it
  ServiceLimits limits;
  StreamGate* gate = nullptr;
  WorkerPool* workers = nullptr;  // the stream workers (no queue bound)
};

// Reactors for one call each; they delete themselves in OnDone.
grpc::ServerReadReactor<v1::IngestBatch>* NewBulkIngestReactor(const IngestStreamEnv* env,
                                                               grpc::CallbackServerContext* ctx,
                                                               v1::BulkIngestResponse* resp);
grpc::ServerBidiReactor<v1::IngestBatch, v1::IngestAck>* NewIngestReactor(
    const IngestStreamEnv* env, grpc::CallbackServerContext* ctx);

}  // namespace neodb::api
