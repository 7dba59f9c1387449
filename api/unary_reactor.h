#pragma once
// The unary RPCs on gRPC's callback API: the generated method hands the
// call's work to a WorkerPool of our own (worker_pool.h) and returns a
// reactor at once; a worker runs the work and finishes the call.
//
// Why: on gRPC 1.51's sync server every unary call took one of a capped set
// of handler threads from the moment it arrived, cancelled or not, and gRPC
// itself refused the next call, whoever sent it, with RESOURCE_EXHAUSTED
// "Server Threadpool Exhausted" once a burst kept them all busy. An HTTP/2
// rapid reset (HEADERS, the request, RST_STREAM, thousands of times) did
// exactly that (tests/integration/http2_flood_test.py). Here a call costs a
// thread only while its work runs, and a call cancelled before that costs
// almost nothing:
//  - admission: the call's work is queued with WorkerPool::TrySubmit; a full
//    queue (max_queued calls waiting) answers RESOURCE_EXHAUSTED at once,
//    naming the bound, instead of growing memory;
//  - a call cancelled while it waits (the client's reset or cancellation,
//    its deadline, its connection lost) is dropped without running: OnCancel
//    withdraws its task from the queue (its place is free again) and
//    finishes the call CANCELLED; a worker that takes a call whose
//    cancellation gRPC has not reported yet checks ctx->IsCancelled() first;
//  - the work, once running, has the call's deadline (DeadlineOf) and
//    cancellation (CancelOf, which drops its queued encoder work) as on the
//    sync server: it blocks a worker while it waits for the embed batcher,
//    RocksDB or an index. NearText's wait for the encoder is not made
//    asynchronous: the engine's NearText is one blocking call (embedding,
//    then the searches), and splitting it would put the engine's search
//    path in api/; the pool is ours and bounded, which is what the floods
//    needed;
//  - the reactor deletes itself in OnDone. gRPC's Shutdown waits until every
//    callback call is done, and a call is done only after its work finished,
//    so the server's Shutdown waits for the work in flight.
//
// Thread-safety: gRPC (OnCancel, OnDone) and one worker use a reactor at
// once; its state is guarded by a mutex.

#include <functional>
#include <string>

#include "api/worker_pool.h"
#include "grpcpp/grpcpp.h"

namespace neodb::api {

// A unary call's work: writes the response in place and returns the call's
// status. Runs on a worker, never on a gRPC thread.
using UnaryWork = std::function<grpc::Status()>;

// The reactor of the call `ctx` (what the generated callback method
// returns), whose `work` runs on `pool`. `pool` outlives every call.
grpc::ServerUnaryReactor* StartUnary(WorkerPool* pool, grpc::CallbackServerContext* ctx,
                                     UnaryWork work);

// The status a call gets when `pool`'s queue is full.
grpc::Status UnaryQueueFull(const WorkerPool& pool);

}  // namespace neodb::api
