#pragma once
// The gRPC services of neodb.v1 over a Database.
//
// Two of gRPC's APIs side by side (the generated WithCallbackMethod_X
// mixins let one service mix them):
//  - the ingest streams (Documents.BulkIngest, Documents.Ingest) run on the
//    callback API (ingest_reactors.h): an open stream holds no thread while
//    it waits for its client; each message's work runs on StreamWorkers,
//    and StreamGate caps open streams (server-wide, per API key) and times
//    idle ones out;
//  - the unary methods stay on the sync API. Their work blocks by nature
//    (RocksDB writes with fsync, the embed batcher's wait, index searches)
//    and is bounded by the call's deadline and by admission (the embed
//    queue's bound, per-request limits), so a unary call holds a handler
//    thread only while it works; a callback version would only move the
//    same blocking onto a pool of our own. gRPC's sync server runs them on
//    its own thread pool, bounded through ResourceQuota::SetMaxThreads
//    (ServerOptions::threads); overload is answered by the batcher's bounded
//    queue (RESOURCE_EXHAUSTED), not by growing memory.
// Handlers hand the engine their call's cancellation, so a cancelled call's
// queued encoder work is dropped (embed_batcher.h). Every handler converts
// its absl::Status with ToGrpcStatus (same codes).

#include <memory>
#include <vector>

#include "cluster/cluster_node.h"
#include "engine/database.h"
#include "api/peer_channels.h"
#include "api/service_limits.h"
#include "api/stream_gate.h"
#include "api/stream_workers.h"
#include "grpcpp/grpcpp.h"
#include "grpcpp/impl/codegen/service_type.h"

namespace neodb::api {

// One object per service of neodb.v1; all share the Database, the
// StreamGate that admits ingest streams and the StreamWorkers that run their
// messages, and, on a server in a cluster, the ClusterNode (null otherwise):
// sharded collections are created, written and read-your-writes waited for
// through it, and PeerChannels dials the other nodes for fan-out searches
// (none owned; all outlive the services and every call; both null, or both set).
std::vector<std::unique_ptr<grpc::Service>> MakeServices(engine::Database* db,
                                                         const ServiceLimits& limits,
                                                         StreamGate* streams,
                                                         StreamWorkers* workers,
                                                         cluster::ClusterNode* cluster = nullptr,
                                                         PeerChannels* peers = nullptr);

}  // namespace neodb::api
