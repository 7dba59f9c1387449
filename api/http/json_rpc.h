#pragma once
// JsonRpc: every unary RPC of neodb.v1 over HTTP + JSON, mapped from the
// proto once. `POST /v1/rpc/<Service>/<Method>` (e.g. /v1/rpc/Search/NearText)
// takes the request message as JSON (proto_json.h), runs the very body the
// gRPC server runs (the same service objects' UnaryBody, services.h, called
// in process on the HTTP server's thread with a grpc::ServerContext of its
// own: no loopback, no second implementation, no hop to the gRPC workers),
// and answers the response message as JSON, or an error (http_status.h).
//
// Routes come from the descriptors of neodb.v1, each bound to the body its
// service added under that name (FindUnaryBody); a method the proto gains
// without a body is missing from Methods(), which the tests compare with
// the descriptors. The streaming
// RPCs (Documents.BulkIngest, Documents.Ingest) are gRPC only: batches of
// documents go through Documents.Upsert.
//
// Same rules as gRPC: API keys and roles through Authorize (auth/authorize.h),
// the caller's role visible to handlers (auth/caller_role.h), the services'
// limits and default deadline; the request metrics are the HTTP server's
// (http_server.h: transport="http"). Not yet: a client's deadline or
// disconnect (HTTP has no standard for either).
//
// Thread-safe: Call may run on many threads at once (the handlers are).

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "api/auth/api_keys.h"
#include "api/auth/authorize.h"
#include "api/services.h"
#include "google/protobuf/message.h"
#include "grpcpp/grpcpp.h"

namespace neodb::api {

struct HttpReply {
  int status = 200;
  std::string body;  // JSON
};

class JsonRpc {
 public:
  // `services`: the gRPC server's service objects (Server::services()), not
  // owned; they must outlive this object. `keys` null: no API keys, as for a
  // gRPC server started without them.
  JsonRpc(const std::vector<std::unique_ptr<grpc::Service>>& services,
          std::shared_ptr<const KeyRing> keys);

  // Runs `service`.`method` ("Search", "NearText") on `body`. `authorization`
  // is the Authorization header's value, nullopt when absent.
  HttpReply Call(const std::string& service, const std::string& method, const std::string& body,
                 std::optional<absl::string_view> authorization) const;

  // Who may call `full_method` ("/neodb.v1.Embedding/Embed") with this
  // header: the same check Call makes, for the other HTTP routes.
  absl::StatusOr<std::optional<Caller>> Authorize(
      absl::string_view full_method, std::optional<absl::string_view> authorization) const;

  // Runs a bound method on an already-parsed request, as `caller`; for the
  // routes that reshape a method (the OpenAI embeddings).
  absl::Status Invoke(const std::string& full_method, const std::optional<Caller>& caller,
                      const google::protobuf::Message& request,
                      google::protobuf::Message* response) const;

  // True when calls need an API key (the server has a key file).
  bool has_keys() const { return keys_ != nullptr; }

  // The full names of the methods served ("/neodb.v1.Search/NearText").
  std::vector<std::string> Methods() const;

 private:
  struct Method {
    const google::protobuf::MethodDescriptor* descriptor;
    UnaryBody body;
  };
  absl::flat_hash_map<std::string, Method> methods_;  // by full name
  std::shared_ptr<const KeyRing> keys_;
};

}  // namespace neodb::api
