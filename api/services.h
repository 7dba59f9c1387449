#pragma once
// The gRPC services of neodb.v1 over a Database.
//
// Sync API, on purpose: every handler's work is blocking by nature (RocksDB
// writes with fsync, the embed batcher's wait, index searches), so a callback
// handler would only move the same blocking onto a pool of our own. gRPC's
// sync server runs handlers on its own thread pool, bounded through
// ResourceQuota::SetMaxThreads (ServerOptions::threads); overload is answered
// by the batcher's bounded queue (RESOURCE_EXHAUSTED), not by growing memory.
// Ingest streams, which hold a thread while they wait for their client, pass
// a StreamGate (stream_gate.h: server-wide cap below the thread count, idle
// timeout). Handlers hand the engine their ServerContext's cancellation, so
// a cancelled call's queued encoder work is dropped (embed_batcher.h).
// Every handler converts its absl::Status with ToGrpcStatus (same codes).

#include <memory>
#include <vector>

#include "api/engine/database.h"
#include "api/stream_gate.h"
#include "grpcpp/grpcpp.h"
#include "grpcpp/impl/codegen/service_type.h"

namespace neodb::api {

struct ServiceLimits {
  // Documents in one Upsert or one BulkIngest message. Default: 1000.
  int max_documents_per_request = 1000;
  // Texts in one Embed request. Default: 256.
  int max_texts_per_request = 256;
  // Used when a client sets no deadline. Default: 5 min.
  absl::Duration default_deadline = absl::Minutes(5);
  // The only directory model paths given over the API may name
  // (ReindexRequest.model_dir; model_paths.h). Empty: such paths are refused.
  // Default: empty.
  std::string models_dir;
  // The only directory Admin.Backup may write into (ConfineNewPath). Empty:
  // backups over the API are refused. Default: empty.
  std::string backup_dir;
};

// One object per service of neodb.v1; all share the Database and the
// StreamGate that admits ingest streams (neither owned; both outlive the
// services).
std::vector<std::unique_ptr<grpc::Service>> MakeServices(engine::Database* db,
                                                         const ServiceLimits& limits,
                                                         StreamGate* streams);

}  // namespace neodb::api
