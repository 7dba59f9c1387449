#pragma once
// What the client subcommands (cmd_client*.cc) share: the --server/--timeout
// flags, the channel, deadlines, calls that print their error and exit, and
// the JSON forms of metadata, collection info and vectors.

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "grpcpp/grpcpp.h"
#include "neodb/v1/neodb.grpc.pb.h"
#include "nlohmann/json.hpp"
#include "tools/neodb/commands.h"
#include "tools/neodb/json_document.h"

namespace neodb::cli {

struct ClientFlags {
  std::string server = "127.0.0.1:50051";
  double timeout_s = 30;
  std::string api_key;  // --api-key, else $NEODB_API_KEY
  std::string tls_ca, tls_cert, tls_key;
  std::string tenant;  // --tenant, else $NEODB_TENANT (commands that take one)
};

void AddClientFlags(CLI::App* cmd, ClientFlags* f);
// --tenant on a command whose calls act for a tenant of a multi-tenant
// collection (README, Tenants); default $NEODB_TENANT.
void AddTenantFlag(CLI::App* cmd, ClientFlags* f);
std::shared_ptr<grpc::Channel> Connect(const ClientFlags& f);
void SetDeadline(grpc::ClientContext* ctx, const ClientFlags& f);
// A call's status, with gRPC's "failed to connect to all addresses" said in
// our words: nothing listens at --server.
absl::Status CallStatus(const grpc::Status& s, const ClientFlags& f);
// A client subcommand under `parent` whose --server/--timeout land in *f; the callback captures f.
CLI::App* AddClientCommand(CLI::App* parent, const std::string& name,
                           const std::string& description, ClientFlags* f);

// One unary call on `stub` under the --timeout deadline. A failed call prints the error and exits
// (Check), so the caller only ever sees a successful response.
template <typename Stub, typename Request, typename Response>
Response CallOrExit(Stub& stub, const ClientFlags& f,
                    grpc::Status (Stub::*method)(grpc::ClientContext*, const Request&, Response*),
                    const Request& req) {
  grpc::ClientContext ctx;
  SetDeadline(&ctx, f);
  Response resp;
  ExitIfError(CallStatus((stub.*method)(&ctx, req, &resp), f));
  return resp;
}

// As above, on a fresh connection to --server; `Service` is the generated service class.
template <typename Service, typename Request, typename Response>
Response CallOrExit(const ClientFlags& f,
                    grpc::Status (Service::Stub::*method)(grpc::ClientContext*, const Request&,
                                                          Response*),
                    const Request& req) {
  auto stub = Service::NewStub(Connect(f));
  return CallOrExit(*stub, f, method, req);
}

json ValueToJson(const v1::Value& v);
json MetadataToJson(const google::protobuf::Map<std::string, v1::Value>& m);
json KeywordInfoToJson(const v1::KeywordIndexInfo& k);
json InfoToJson(const v1::CollectionInfo& i);
// A search's hits as JSON objects (id, score, text, metadata, explain).
json HitsToJson(const v1::SearchResponse& resp);
// One JSON line on stdout.
void Print(const json& j);
// `j` (an object) with "score" (when given) and "vector" (when non-empty)
// appended, their floats written shortest round-trip (common/float_text.h),
// not widened to doubles.
void PrintWithFloats(const json& j, std::optional<float> score, std::span<const float> vector);

// near-vector, list, verify, reindex-status (cmd_client_vectors.cc).
void RegisterClientVectorCommands(CLI::App& app);
// recommend, search-batch (cmd_client_queries.cc).
void RegisterClientQueryCommands(CLI::App& app);

}  // namespace neodb::cli
