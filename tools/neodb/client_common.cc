#include "tools/neodb/client_common.h"

#include <cstdio>
#include <cstdlib>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "clients/cpp/grpc_status.h"
#include "common/env.h"
#include "common/float_text.h"
#include "db/metadata_types.h"

namespace neodb::cli {

void AddClientFlags(CLI::App* cmd, ClientFlags* f) {
  cmd->add_option("--server", f->server, "Server address host:port")->capture_default_str();
  cmd->add_option("--timeout", f->timeout_s, "Deadline of each call, seconds")
      ->capture_default_str();
  cmd->add_option("--api-key", f->api_key, "API key (default: $NEODB_API_KEY)");
  cmd->add_option("--tls-ca", f->tls_ca, "CA (PEM) that signed the server's certificate: TLS");
  cmd->add_option("--tls-cert", f->tls_cert, "Client certificate (PEM), for mutual TLS");
  cmd->add_option("--tls-key", f->tls_key, "Client private key (PEM), for mutual TLS");
}

void AddTenantFlag(CLI::App* cmd, ClientFlags* f) {
  if (const char* env = std::getenv("NEODB_TENANT")) f->tenant = env;
  cmd->add_option("--tenant", f->tenant,
                  "The tenant a multi-tenant collection's call acts for (default: $NEODB_TENANT)");
}

namespace {

std::string ReadPemOrExit(const std::string& path, const char* flag) {
  absl::StatusOr<std::string> text = ReadFileToString(Env::Default(), path);
  if (!text.ok()) {
    ExitIfError(absl::InvalidArgumentError(
        absl::StrCat(flag, ": cannot read ", path, " (", text.status().message(), ")")));
  }
  return *std::move(text);
}

}  // namespace

std::shared_ptr<grpc::Channel> Connect(const ClientFlags& f) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(64 << 20);
  args.SetMaxSendMessageSize(64 << 20);
  if (f.tls_ca.empty() && f.tls_cert.empty() && f.tls_key.empty()) {
    return grpc::CreateCustomChannel(f.server, grpc::InsecureChannelCredentials(), args);
  }
  if (f.tls_cert.empty() != f.tls_key.empty()) {
    ExitIfError(absl::InvalidArgumentError("--tls-cert and --tls-key go together"));
  }
  grpc::SslCredentialsOptions ssl;
  if (!f.tls_ca.empty()) ssl.pem_root_certs = ReadPemOrExit(f.tls_ca, "--tls-ca");
  if (!f.tls_cert.empty()) {
    ssl.pem_cert_chain = ReadPemOrExit(f.tls_cert, "--tls-cert");
    ssl.pem_private_key = ReadPemOrExit(f.tls_key, "--tls-key");
  }
  return grpc::CreateCustomChannel(f.server, grpc::SslCredentials(ssl), args);
}

// Every call goes through here: its deadline and its API key.
void SetDeadline(grpc::ClientContext* ctx, const ClientFlags& f) {
  ctx->set_deadline(std::chrono::system_clock::now() +
                    std::chrono::milliseconds(static_cast<int64_t>(f.timeout_s * 1000)));
  std::string key = f.api_key;
  if (key.empty()) {
    if (const char* env = std::getenv("NEODB_API_KEY")) key = env;
  }
  if (!key.empty()) ctx->AddMetadata("authorization", "Bearer " + key);
}

// A call's status, with gRPC's "failed to connect to all addresses" said in
// our words: nothing listens at --server.
absl::Status CallStatus(const grpc::Status& s, const ClientFlags& f) {
  if (s.error_code() == grpc::StatusCode::UNAVAILABLE &&
      absl::StrContains(s.error_message(), "failed to connect to all addresses")) {
    return absl::UnavailableError(
        absl::StrCat("no neodb server at ", f.server, " (start one with `neodb serve`)"));
  }
  return client::FromGrpcStatus(s);
}

// A client subcommand under `parent` whose --server/--timeout land in *f; the callback captures f.
CLI::App* AddClientCommand(CLI::App* parent, const std::string& name,
                           const std::string& description, ClientFlags* f) {
  CLI::App* c = parent->add_subcommand(name, description);
  AddClientFlags(c, f);
  return c;
}

json ValueToJson(const v1::Value& v) {
  switch (v.kind_case()) {
    case v1::Value::kStringValue:
      return v.string_value();
    case v1::Value::kIntValue:
      return v.int_value();
    case v1::Value::kDoubleValue:
      return v.double_value();
    case v1::Value::kBoolValue:
      return v.bool_value();
    case v1::Value::kListValue: {
      json list = json::array();
      for (const v1::Value& item : v.list_value().values()) list.push_back(ValueToJson(item));
      return list;
    }
    case v1::Value::kObjectValue:
      return MetadataToJson(v.object_value().fields());
    case v1::Value::kDatetimeMicros:  // the form JsonToMetadata reads back
      if (v.datetime_micros() < db::kMinDateTimeMicros ||
          v.datetime_micros() > db::kMaxDateTimeMicros) {
        return nullptr;
      }
      return json{{"datetime", db::FormatDateTime(db::DateTime{v.datetime_micros()})}};
    case v1::Value::kGeoValue:
      return json{{"lat", v.geo_value().lat()}, {"lon", v.geo_value().lon()}};
    default:
      return nullptr;
  }
}

json MetadataToJson(const google::protobuf::Map<std::string, v1::Value>& m) {
  json j = json::object();
  for (const auto& [k, v] : m) j[k] = ValueToJson(v);
  return j;
}

json KeywordInfoToJson(const v1::KeywordIndexInfo& k) {
  return json{{"documents", k.documents()},
              {"terms", k.terms()},
              {"postings", k.postings()},
              {"memory_bytes", k.memory_bytes()},
              {"snapshot_bytes", k.snapshot_bytes()}};
}

json InfoToJson(const v1::CollectionInfo& i) {
  json j{{"name", i.spec().name()},
         {"count", i.count()},
         {"dimension", i.dimension()},
         {"model_id", i.model_id()},
         {"index_type", i.index_type()},
         {"index_size", i.index_size()},
         {"metric", v1::Metric_Name(i.spec().metric())},
         {"pooling", v1::Pooling_Name(i.spec().pooling())},
         {"overflow", v1::Overflow_Name(i.spec().overflow())},
         {"query_prefix", i.spec().query_prefix()},
         {"document_prefix", i.spec().document_prefix()},
         {"precision", i.spec().precision()},
         {"fusion", i.spec().fusion()},
         {"analyzer", i.spec().analyzer()},
         {"bm25_k1", i.spec().bm25_k1()},
         {"bm25_b", i.spec().bm25_b()},
         {"title_field", i.spec().title_field()},
         {"title_weight", i.spec().title_weight()},
         {"keyword", KeywordInfoToJson(i.keyword())}};
  if (i.spec().has_fusion_alpha()) j["fusion_alpha"] = i.spec().fusion_alpha();
  if (i.spec().multi_tenant()) j["multi_tenant"] = true;
  if (i.spec().vectors() == v1::VECTOR_SOURCE_EXTERNAL) {
    j["vectors"] = "external";
    j["vectors_name"] = i.spec().vectors_name();
    if (!i.spec().query_model().empty()) j["query_model"] = i.spec().query_model();
  } else {
    j["vectors"] = "model";
  }
  return j;
}

void Print(const json& j) { std::printf("%s\n", j.dump().c_str()); }

void PrintWithFloats(const json& j, std::optional<float> score, std::span<const float> vector) {
  std::string line = j.dump();
  if (line.empty() || line.back() != '}') {
    std::printf("%s\n", line.c_str());
    return;
  }
  line.pop_back();
  auto key = [&](const char* name) {
    if (line.size() > 1) line.push_back(',');
    absl::StrAppend(&line, "\"", name, "\":");
  };
  if (score) {
    key("score");
    AppendFloatJson(&line, *score);
  }
  if (!vector.empty()) {
    key("vector");
    AppendFloatJsonArray(&line, vector);
  }
  line.push_back('}');
  std::printf("%s\n", line.c_str());
}

json HitsToJson(const v1::SearchResponse& resp) {
  json hits = json::array();
  for (const auto& h : resp.hits()) {
    json j{{"id", h.id()}, {"score", h.score()}};
    if (!h.text().empty()) j["text"] = h.text();
    if (!h.metadata().empty()) j["metadata"] = MetadataToJson(h.metadata());
    if (h.has_explain()) {
      const auto& e = h.explain();
      j["explain"] = json{{"keyword_rank", e.keyword_rank()},
                          {"keyword_score", e.keyword_score()},
                          {"vector_rank", e.vector_rank()},
                          {"vector_score", e.vector_score()},
                          {"fused_score", e.fused_score()},
                          {"mode", resp.mode()},
                          {"alpha", resp.alpha()}};
    }
    hits.push_back(std::move(j));
  }
  return hits;
}

}  // namespace neodb::cli
