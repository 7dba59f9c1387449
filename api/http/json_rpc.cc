#include "api/http/json_rpc.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "api/auth/caller_role.h"
#include "api/grpc_status.h"
#include "api/http/http_status.h"
#include "api/http/proto_json.h"
#include "api/services.h"
#include "common/status_macros.h"
#include "google/protobuf/descriptor.h"
#include "neodb/v1/neodb.grpc.pb.h"

namespace neodb::api {
namespace {

namespace pb = google::protobuf;

constexpr absl::string_view kPackage = "neodb.v1";

HttpReply Error(const absl::Status& s) { return {HttpStatusFor(s.code()), ErrorJson(s)}; }

}  // namespace

JsonRpc::JsonRpc(const std::vector<std::unique_ptr<grpc::Service>>& services,
                 std::shared_ptr<const KeyRing> keys)
    : keys_(std::move(keys)) {
  // Every unary method of neodb.v1's services, bound to its body
  // (services.h); one without a body (a service this server does not run)
  // is left out of Methods().
  const pb::FileDescriptor* file =
      pb::DescriptorPool::generated_pool()->FindServiceByName(v1::Search::service_full_name())
          ->file();
  for (int i = 0; i < file->service_count(); ++i) {
    const pb::ServiceDescriptor* sd = file->service(i);
    for (int j = 0; j < sd->method_count(); ++j) {
      const pb::MethodDescriptor* md = sd->method(j);
      if (md->client_streaming() || md->server_streaming()) continue;  // gRPC only
      const std::string full = absl::StrCat("/", sd->full_name(), "/", md->name());
      UnaryBody body = FindUnaryBody(services, full);
      if (body == nullptr) continue;
      methods_.emplace(full, Method{md, std::move(body)});
    }
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
  return FromGrpcStatus(it->second.body(&ctx, request, response));
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
