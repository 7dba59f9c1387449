#include "api/http/json_rpc.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "api/auth/caller_role.h"
#include "api/grpc_status.h"
#include "api/http/http_status.h"
#include "api/http/proto_json.h"
#include "common/status_macros.h"
#include "google/protobuf/descriptor.h"
#include "neodb/v1/neodb.grpc.pb.h"

namespace neodb::api {
namespace {

namespace pb = google::protobuf;

constexpr absl::string_view kPackage = "neodb.v1";

using Handler = std::function<grpc::Status(grpc::ServerContext*, const pb::Message&, pb::Message*)>;

// The handler `m` of whichever of `services` is a `Svc`, type-erased over
// its request and response. Null when no service is one (a server built
// without that service).
template <class Svc, class Req, class Resp>
Handler Bind(const std::vector<std::unique_ptr<grpc::Service>>& services,
             grpc::Status (Svc::*m)(grpc::ServerContext*, const Req*, Resp*)) {
  for (const auto& s : services) {
    if (auto* svc = dynamic_cast<Svc*>(s.get())) {
      return [svc, m](grpc::ServerContext* ctx, const pb::Message& req, pb::Message* resp) {
        return (svc->*m)(ctx, static_cast<const Req*>(&req), static_cast<Resp*>(resp));
      };
    }
  }
  return nullptr;
}

HttpReply Error(const absl::Status& s) { return {HttpStatusFor(s.code()), ErrorJson(s)}; }

}  // namespace

JsonRpc::JsonRpc(const std::vector<std::unique_ptr<grpc::Service>>& services,
                 std::shared_ptr<const KeyRing> keys)
    : keys_(std::move(keys)) {
  // One line per unary method of neodb.v1; the request and response types
  // come with the handler's signature and are checked against the
  // descriptors below.
  const std::vector<std::pair<const char*, Handler>> bindings = {
      {"Collections.Create", Bind(services, &v1::Collections::Service::Create)},
      {"Collections.List", Bind(services, &v1::Collections::Service::List)},
      {"Collections.Describe", Bind(services, &v1::Collections::Service::Describe)},
      {"Collections.Drop", Bind(services, &v1::Collections::Service::Drop)},
      {"Collections.SetFusion", Bind(services, &v1::Collections::Service::SetFusion)},
      {"Documents.Upsert", Bind(services, &v1::Documents::Service::Upsert)},
      {"Documents.Get", Bind(services, &v1::Documents::Service::Get)},
      {"Documents.Delete", Bind(services, &v1::Documents::Service::Delete)},
      {"Documents.List", Bind(services, &v1::Documents::Service::List)},
      {"Documents.Count", Bind(services, &v1::Documents::Service::Count)},
      {"Documents.UpdateMetadata", Bind(services, &v1::Documents::Service::UpdateMetadata)},
      {"Documents.ListTenants", Bind(services, &v1::Documents::Service::ListTenants)},
      {"Search.NearText", Bind(services, &v1::Search::Service::NearText)},
      {"Search.NearVector", Bind(services, &v1::Search::Service::NearVector)},
      {"Search.KeywordStats", Bind(services, &v1::Search::Service::KeywordStats)},
      {"Search.Recommend", Bind(services, &v1::Search::Service::Recommend)},
      {"Search.BatchNearText", Bind(services, &v1::Search::Service::BatchNearText)},
      {"Embedding.Embed", Bind(services, &v1::Embedding::Service::Embed)},
      {"Admin.Stats", Bind(services, &v1::Admin::Service::Stats)},
      {"Admin.Snapshot", Bind(services, &v1::Admin::Service::Snapshot)},
      {"Admin.Reindex", Bind(services, &v1::Admin::Service::Reindex)},
      {"Admin.ReindexStatus", Bind(services, &v1::Admin::Service::ReindexStatus)},
      {"Admin.Compact", Bind(services, &v1::Admin::Service::Compact)},
      {"Admin.Verify", Bind(services, &v1::Admin::Service::Verify)},
      {"Admin.Backup", Bind(services, &v1::Admin::Service::Backup)},
      {"Admin.ClusterStatus", Bind(services, &v1::Admin::Service::ClusterStatus)},
      {"Admin.ClusterRebalance", Bind(services, &v1::Admin::Service::ClusterRebalance)},
      {"Admin.ClusterBackup", Bind(services, &v1::Admin::Service::ClusterBackup)},
      {"Admin.ClusterRestore", Bind(services, &v1::Admin::Service::ClusterRestore)},
  };
  const pb::DescriptorPool* pool = pb::DescriptorPool::generated_pool();
  for (const auto& [name, handler] : bindings) {
    const pb::MethodDescriptor* md = pool->FindMethodByName(absl::StrCat(kPackage, ".", name));
    NEODB_CHECK(md != nullptr);  // a binding names a method neodb.v1 does not have
    NEODB_CHECK(!md->client_streaming() && !md->server_streaming());
    if (handler == nullptr) continue;
    methods_.emplace(absl::StrCat("/", md->service()->full_name(), "/", md->name()),
                     Method{md, handler});
  }
}

absl::StatusOr<std::optional<Caller>> JsonRpc::Authorize(
    absl::string_view full_method, std::optional<absl::string_view> authorization) const {
  if (keys_ == nullptr) return std::optional<Caller>();
  return api::Authorize(*keys_, full_method, authorization);
}

absl::Status JsonRpc::Invoke(const std::string& full_method, const std::optional<Caller>& caller,
                             const pb::Message& request, pb::Message* response) const {
  auto it = methods_.find(full_method);
  if (it == methods_.end()) return absl::NotFoundError(absl::StrCat("no method ", full_method));
  grpc::ServerContext ctx;  // belongs to no call: no client deadline, never cancelled
  ScopedCallerRole role(caller ? std::optional<Role>(caller->role) : std::nullopt);
  return FromGrpcStatus(it->second.handler(&ctx, request, response));
}

HttpReply JsonRpc::Call(const std::string& service, const std::string& method,
                        const std::string& body,
                        std::optional<absl::string_view> authorization) const {
  const std::string full = absl::StrCat("/", kPackage, ".", service, "/", method);
  auto it = methods_.find(full);
  if (it == methods_.end()) {
    return Error(absl::NotFoundError(absl::StrCat(
        "no method ", kPackage, ".", service, ".", method,
        " over HTTP (the streaming ones, Documents.BulkIngest and Documents.Ingest, are gRPC "
        "only; GET /openapi.json lists the rest)")));
  }
  absl::StatusOr<std::optional<Caller>> caller = Authorize(full, authorization);
  if (!caller.ok()) return Error(caller.status());
  const pb::MethodDescriptor* md = it->second.descriptor;
  pb::MessageFactory* factory = pb::MessageFactory::generated_factory();
  std::unique_ptr<pb::Message> request(factory->GetPrototype(md->input_type())->New());
  std::unique_ptr<pb::Message> response(factory->GetPrototype(md->output_type())->New());
  if (absl::Status s = JsonToMessage(body, request.get()); !s.ok()) return Error(s);
  if (absl::Status s = Invoke(full, *caller, *request, response.get()); !s.ok()) return Error(s);
  return {200, MessageToJson(*response)};
}

std::vector<std::string> JsonRpc::Methods() const {
  std::vector<std::string> out;
  for (const auto& [name, m] : methods_) out.push_back(name);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace neodb::api
