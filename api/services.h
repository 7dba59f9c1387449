#pragma once
// The gRPC services of neodb.v1 over a Database.
//
// Every method runs on gRPC's callback API (the generated CallbackService
// of each service), so no call holds a gRPC thread while it waits:
//  - the ingest streams (Documents.BulkIngest, Documents.Ingest;
//    ingest_reactors.h): an open stream holds no thread while it waits for
//    its client; each message's work runs on the stream workers, and
//    StreamGate caps open streams (server-wide, per API key) and times idle
//    ones out;
//  - the unary methods (unary_reactor.h): each call's work (RocksDB writes
//    with fsync, the embed batcher's wait, index searches, quorum acks)
//    runs on the unary workers, a WorkerPool of our own whose bounded queue
//    answers RESOURCE_EXHAUSTED when full; a call cancelled before its work
//    starts (an HTTP/2 rapid reset) leaves the queue unrun. On gRPC 1.51's
//    sync server every call, cancelled or not, took a handler thread, and
//    a burst of resets made gRPC refuse other clients' calls ("Server
//    Threadpool Exhausted"; tests/integration/http2_flood_test.py).
// Each unary method has one body (its work), which both transports run:
// gRPC on the unary workers, the HTTP JSON API (http/json_rpc.h) in process
// on its own thread, through FindUnaryBody. Bodies see the call only as a
// grpc::ServerContextBase: its deadline (DeadlineOf), its cancellation
// (CancelOf: a cancelled call's queued encoder work is dropped,
// embed_batcher.h), its metadata and its caller's role (auth/caller_role.h).
// Every body converts its absl::Status with ToGrpcStatus (same codes).

#include <functional>
#include <memory>
#include <string_view>
#include <vector>

#include "cluster/cluster_node.h"
#include "engine/database.h"
#include "api/peer_channels.h"
#include "api/service_limits.h"
#include "api/stream_gate.h"
#include "api/worker_pool.h"
#include "google/protobuf/message.h"
#include "grpcpp/grpcpp.h"
#include "grpcpp/impl/codegen/service_type.h"

namespace neodb::api {

// One object per service of neodb.v1; all share the Database, the
// StreamGate that admits ingest streams, the WorkerPool that runs their
// messages (`stream_workers`), the one that runs the unary calls
// (`unary_workers`), and, on a server in a cluster, the ClusterNode (null
// otherwise): sharded collections are created, written and read-your-writes
// waited for through it, and PeerChannels dials the other nodes for fan-out
// searches (none owned; all outlive the services and every call; cluster
// and peers both null, or both set).
std::vector<std::unique_ptr<grpc::Service>> MakeServices(engine::Database* db,
                                                         const ServiceLimits& limits,
                                                         StreamGate* streams,
                                                         WorkerPool* stream_workers,
                                                         WorkerPool* unary_workers,
                                                         cluster::ClusterNode* cluster = nullptr,
                                                         PeerChannels* peers = nullptr);

// A unary method's body, type-erased over its request and response (which
// must be the method's types): writes the response and returns the status.
// Blocks; safe to run on many threads at once.
using UnaryBody = std::function<grpc::Status(grpc::ServerContextBase* ctx,
                                             const google::protobuf::Message& request,
                                             google::protobuf::Message* response)>;

// The body of `full_method` ("/neodb.v1.Search/NearText") among `services`
// (MakeServices's); null when none of them has one (a streaming method, or
// a method no service here serves). The body lives as long as its service.
UnaryBody FindUnaryBody(const std::vector<std::unique_ptr<grpc::Service>>& services,
                        std::string_view full_method);

}  // namespace neodb::api
