#include "cluster/nats_client.h"

#include <algorithm>
#include <cstdlib>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace neodb::cluster {

absl::Status NatsStatus(natsStatus s, jsErrCode js_error, const std::string& what) {
  if (s == NATS_OK) return absl::OkStatus();
  // nats.c keeps the last error's detailed text per thread.
  const char* detail = nats_GetLastError(nullptr);
  std::string msg = absl::StrCat(what, ": ", natsStatus_GetText(s));
  if (detail != nullptr && *detail != '\0' && std::string_view(detail) != natsStatus_GetText(s)) {
    absl::StrAppend(&msg, " (", detail, ")");
  }
  if (js_error != 0) absl::StrAppend(&msg, " [JetStream error ", static_cast<int>(js_error), "]");
  switch (s) {
    case NATS_NO_SERVER:
    case NATS_CONNECTION_CLOSED:
    case NATS_CONNECTION_DISCONNECTED:
    case NATS_TIMEOUT:
    case NATS_NO_RESPONDERS:
    case NATS_STALE_CONNECTION:
    case NATS_IO_ERROR:
    case NATS_SLOW_CONSUMER:
      return absl::UnavailableError(msg);
    case NATS_NOT_FOUND:
      return absl::NotFoundError(msg);
    case NATS_INVALID_ARG:
    case NATS_INVALID_SUBJECT:
    case NATS_MAX_PAYLOAD:
      return absl::InvalidArgumentError(msg);
    default:
      break;
  }
  // JetStream's own refusals that pass: no quorum, a leader lost or being
  // elected, and (servers 2.10 and later) a publish whose de-duplication id
  // is still being stored from an earlier attempt (10158, newer than
  // nats.c 3.4's list): each is worth a retry with the same id.
  constexpr int kDuplicateIdInProcess = 10158;
  if (js_error == JSClusterNoPeersErr || js_error == JSClusterNotAvailErr ||
      js_error == JSClusterNotLeaderErr || static_cast<int>(js_error) == kDuplicateIdInProcess) {
    return absl::UnavailableError(msg);
  }
  if (js_error == JSStreamNotFoundErr) return absl::NotFoundError(msg);
  // A sealed shard log: a cluster reindex moved the collection to a new log
  // (cluster_reindex.cc). Not to be retried as it is: embedded again with the
  // new model, the write goes to the new log.
  if (js_error == JSStreamSealedErr) {
    return absl::AbortedError(absl::StrCat(
        msg, ": the collection is switching to a reindexed log (its model changes); retry"));
  }
  return absl::InternalError(msg);
}

absl::StatusOr<std::unique_ptr<NatsClient>> NatsClient::Connect(const NatsClientOptions& options) {
  if (options.servers.empty()) return absl::InvalidArgumentError("no NATS server given");
  std::unique_ptr<NatsClient> c(new NatsClient(options));
  natsStatus s = natsOptions_Create(&c->opts_);
  std::vector<const char*> urls;
  for (const std::string& u : options.servers) urls.push_back(u.c_str());
  const int64_t timeout_ms = absl::ToInt64Milliseconds(options.timeout);
  if (s == NATS_OK) s = natsOptions_SetServers(c->opts_, urls.data(), static_cast<int>(urls.size()));
  if (s == NATS_OK) s = natsOptions_SetName(c->opts_, options.name.c_str());
  if (s == NATS_OK) s = natsOptions_SetTimeout(c->opts_, timeout_ms);
  // Never give up reconnecting: a node outlives any one server's restart.
  if (s == NATS_OK) s = natsOptions_SetMaxReconnect(c->opts_, -1);
  if (s == NATS_OK) {
    s = natsOptions_SetReconnectWait(c->opts_, absl::ToInt64Milliseconds(options.reconnect_wait));
  }
  if (s != NATS_OK) return NatsStatus(s, static_cast<jsErrCode>(0), "setting NATS client options");
  s = natsConnection_Connect(&c->conn_, c->opts_);
  if (s != NATS_OK) {
    return NatsStatus(s, static_cast<jsErrCode>(0), absl::StrCat("connecting to NATS at ", absl::StrJoin(options.servers, ",")));
  }
  jsOptions jo;
  jsOptions_Init(&jo);
  jo.Wait = timeout_ms;
  s = natsConnection_JetStream(&c->js_, c->conn_, &jo);
  if (s != NATS_OK) return NatsStatus(s, static_cast<jsErrCode>(0), "opening JetStream");
  return c;
}

int NatsClient::ServerCount() const {
  char** servers = nullptr;
  int count = 0;
  if (natsConnection_GetServers(conn_, &servers, &count) != NATS_OK) return 1;
  std::set<std::string> unique;
  for (int i = 0; i < count; ++i) {
    unique.insert(servers[i]);
    free(servers[i]);
  }
  free(servers);
  return std::max<int>(1, static_cast<int>(unique.size()));
}

NatsClient::~NatsClient() {
  if (js_ != nullptr) jsCtx_Destroy(js_);
  if (conn_ != nullptr) {
    natsConnection_Close(conn_);
    natsConnection_Destroy(conn_);
  }
  if (opts_ != nullptr) natsOptions_Destroy(opts_);
}

}  // namespace neodb::cluster
