// Client subcommands: talk to `neodb serve` over gRPC (neodb.v1). Every call
// carries a deadline (--timeout). Results go to stdout as JSON lines;
// progress and errors to stderr.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "api/convert.h"
#include "api/engine/embed_settings.h"
#include "api/grpc_status.h"
#include "common/status_macros.h"
#include "grpcpp/grpcpp.h"
#include "index/metric.h"
#include "neodb/v1/neodb.grpc.pb.h"
#include "nlohmann/json.hpp"
#include "tools/neodb/commands.h"

namespace neodb::cli {
namespace {

using json = nlohmann::json;

struct ClientFlags {
  std::string server = "127.0.0.1:50051";
  double timeout_s = 30;
};

void AddClientFlags(CLI::App* cmd, ClientFlags* f) {
  cmd->add_option("--server", f->server, "Server address host:port")->capture_default_str();
  cmd->add_option("--timeout", f->timeout_s, "Deadline of each call, seconds")
      ->capture_default_str();
}

std::shared_ptr<grpc::Channel> Connect(const ClientFlags& f) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(64 << 20);
  args.SetMaxSendMessageSize(64 << 20);
  return grpc::CreateCustomChannel(f.server, grpc::InsecureChannelCredentials(), args);
}

void SetDeadline(grpc::ClientContext* ctx, const ClientFlags& f) {
  ctx->set_deadline(std::chrono::system_clock::now() +
                    std::chrono::milliseconds(static_cast<int64_t>(f.timeout_s * 1000)));
}

// A call's status, with gRPC's "failed to connect to all addresses" said in
// our words: nothing listens at --server.
absl::Status CallStatus(const grpc::Status& s, const ClientFlags& f) {
  if (s.error_code() == grpc::StatusCode::UNAVAILABLE &&
      absl::StrContains(s.error_message(), "failed to connect to all addresses")) {
    return absl::UnavailableError(
        absl::StrCat("no neodb server at ", f.server, " (start one with `neodb serve`)"));
  }
  return api::FromGrpcStatus(s);
}

// A client subcommand under `parent` whose --server/--timeout land in *f; the callback captures f.
CLI::App* AddClientCommand(CLI::App* parent, const std::string& name,
                           const std::string& description, ClientFlags* f) {
  CLI::App* c = parent->add_subcommand(name, description);
  AddClientFlags(c, f);
  return c;
}

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
    default:
      return nullptr;
  }
}

json MetadataToJson(const google::protobuf::Map<std::string, v1::Value>& m) {
  json j = json::object();
  for (const auto& [k, v] : m) j[k] = ValueToJson(v);
  return j;
}

absl::Status JsonToMetadata(const json& j, google::protobuf::Map<std::string, v1::Value>* out) {
  if (!j.is_object()) return absl::InvalidArgumentError("\"metadata\" must be an object");
  for (auto it = j.begin(); it != j.end(); ++it) {
    v1::Value v;
    if (it->is_string())
      v.set_string_value(it->get<std::string>());
    else if (it->is_boolean())
      v.set_bool_value(it->get<bool>());
    else if (it->is_number_integer())
      v.set_int_value(it->get<int64_t>());
    else if (it->is_number())
      v.set_double_value(it->get<double>());
    else
      return absl::InvalidArgumentError(
          absl::StrCat("metadata '", it.key(), "': unsupported type"));
    (*out)[it.key()] = v;
  }
  return absl::OkStatus();
}

json InfoToJson(const v1::CollectionInfo& i) {
  return json{{"name", i.spec().name()},
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
              {"precision", i.spec().precision()}};
}

void Print(const json& j) { std::printf("%s\n", j.dump().c_str()); }

// --- collections ------------------------------------------------------------

void RegisterCollections(CLI::App& app) {
  CLI::App* group = app.add_subcommand("collections", "Create, list, describe, drop collections");
  group->require_subcommand(1);

  {
    auto f = std::make_shared<ClientFlags>();
    auto spec = std::make_shared<v1::CollectionSpec>();
    auto index = std::make_shared<std::string>("flat");
    auto metric = std::make_shared<std::string>("cosine");
    auto pooling = std::make_shared<std::string>("mean");
    auto overflow = std::make_shared<std::string>("error");
    auto name = std::make_shared<std::string>();
    auto qp = std::make_shared<std::string>();
    auto dp = std::make_shared<std::string>();
    auto precision = std::make_shared<std::string>();
    CLI::App* c = AddClientCommand(group, "create", "Create a collection", f.get());
    c->add_option("name", *name, "Collection name")->required();
    c->add_option("--index", *index, "flat | hnsw | ivfpq | a factory string (HNSW32, IVF256,PQ16)")
        ->capture_default_str();
    c->add_option("--metric", *metric, "cosine | ip | l2")->capture_default_str();
    c->add_option("--pooling", *pooling, "mean | cls")->capture_default_str();
    c->add_option("--overflow", *overflow, "error | chunk (texts over the model length)")
        ->capture_default_str();
    c->add_option("--query-prefix", *qp, "Instruction prepended to queries");
    c->add_option("--document-prefix", *dp, "Instruction prepended to documents");
    c->add_option("--precision", *precision,
                  "Encoder precision of its vectors and queries: f32, bf16 or int8 (default: "
                  "the server's --precision)");
    c->callback([=] {
      v1::CreateCollectionRequest req;
      auto* s = req.mutable_spec();
      s->set_name(*name);
      s->mutable_index()->set_type(*index);
      // The names are the index's and the engine's (one codec each).
      auto m = index::ParseMetric(*metric);
      ExitIfError(m.status());
      s->set_metric(api::ToProto(*m));
      auto p = engine::ParsePooling(*pooling);
      ExitIfError(p.status());
      s->set_pooling(api::ToProto(*p));
      auto o = engine::ParseOverflow(*overflow);
      ExitIfError(o.status());
      s->set_overflow(api::ToProto(*o));
      s->set_query_prefix(*qp);
      s->set_document_prefix(*dp);
      if (!precision->empty()) {
        ExitIfError(encoder::ParsePrecision(*precision).status());
        s->set_precision(*precision);
      }
      Print(
          InfoToJson(CallOrExit<v1::Collections>(*f, &v1::Collections::Stub::Create, req).info()));
    });
  }
  {
    auto f = std::make_shared<ClientFlags>();
    CLI::App* c = AddClientCommand(group, "list", "List collections", f.get());
    c->callback([=] {
      const auto resp = CallOrExit<v1::Collections>(*f, &v1::Collections::Stub::List,
                                                    v1::ListCollectionsRequest());
      for (const auto& i : resp.collections()) Print(InfoToJson(i));
    });
  }
  {
    auto f = std::make_shared<ClientFlags>();
    auto name = std::make_shared<std::string>();
    CLI::App* c = AddClientCommand(group, "describe", "Describe a collection", f.get());
    c->add_option("name", *name, "Collection name")->required();
    c->callback([=] {
      v1::DescribeCollectionRequest req;
      req.set_name(*name);
      Print(InfoToJson(
          CallOrExit<v1::Collections>(*f, &v1::Collections::Stub::Describe, req).info()));
    });
  }
  {
    auto f = std::make_shared<ClientFlags>();
    auto name = std::make_shared<std::string>();
    CLI::App* c =
        AddClientCommand(group, "drop", "Drop a collection and all its documents", f.get());
    c->add_option("name", *name, "Collection name")->required();
    c->callback([=] {
      v1::DropCollectionRequest req;
      req.set_name(*name);
      CallOrExit<v1::Collections>(*f, &v1::Collections::Stub::Drop, req);
    });
  }
}

// --- ingest -----------------------------------------------------------------

// Streams batches on this thread while a reader thread counts the server's
// acknowledgements: the progress line reports documents committed.
absl::Status Ingest(const ClientFlags& f, const std::string& collection, const std::string& path,
                    int batch_size) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot open ", path));
  auto stub = v1::Documents::NewStub(Connect(f));
  grpc::ClientContext ctx;
  SetDeadline(&ctx, f);
  auto stream = stub->Ingest(&ctx);
  const auto start = std::chrono::steady_clock::now();
  auto seconds = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  v1::IngestAck last;
  std::thread reader([&] {
    v1::IngestAck ack;
    while (stream->Read(&ack)) {
      last = ack;
      std::fprintf(stderr, "\rneodb ingest: %llu documents committed (%.0f/s)",
                   static_cast<unsigned long long>(ack.documents()),
                   ack.documents() / std::max(seconds(), 1e-9));
    }
  });
  v1::IngestBatch batch;
  batch.set_collection(collection);
  auto flush = [&]() -> bool {
    if (batch.documents().empty()) return true;
    if (!stream->Write(batch)) return false;
    batch.clear_documents();
    return true;
  };
  absl::Status input = absl::OkStatus();
  std::string line;
  uint64_t line_no = 0;
  bool open = true;
  while (open && std::getline(in, line)) {
    ++line_no;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    json j;
    try {
      j = json::parse(line);
    } catch (const json::exception& e) {
      input =
          absl::InvalidArgumentError(absl::StrCat(path, ":", line_no, ": not JSON: ", e.what()));
      break;
    }
    if (!j.is_object() || !j.contains("text") || !j["text"].is_string()) {
      input = absl::InvalidArgumentError(
          absl::StrCat(path, ":", line_no, ": expected {\"id\",\"text\",\"metadata\"}"));
      break;
    }
    v1::Document* d = batch.add_documents();
    if (j.contains("id")) {
      if (j["id"].is_string()) {
        d->set_id(j["id"].get<std::string>());
      } else if (j["id"].is_number_integer()) {
        d->set_id(std::to_string(j["id"].get<int64_t>()));
      } else {
        input = absl::InvalidArgumentError(
            absl::StrCat(path, ":", line_no, ": \"id\" must be a string"));
        break;
      }
    }
    d->set_text(j["text"].get<std::string>());
    if (j.contains("metadata")) {
      absl::Status s = JsonToMetadata(j["metadata"], d->mutable_metadata());
      if (!s.ok()) {
        input = absl::InvalidArgumentError(absl::StrCat(path, ":", line_no, ": ", s.message()));
        break;
      }
    }
    if (batch.documents_size() >= batch_size) open = flush();
  }
  // Bad input: what was sent stays committed, the rest is not sent.
  if (input.ok() && open) flush();
  stream->WritesDone();
  reader.join();
  grpc::Status s = stream->Finish();
  std::fprintf(stderr, "\n");
  if (!s.ok()) return CallStatus(s, f);
  RETURN_IF_ERROR(input);
  Print(json{{"documents", last.documents()},
             {"batches", last.batches()},
             {"tokens", last.tokens()},
             {"seconds", seconds()}});
  return absl::OkStatus();
}

// --- search, get, delete ------------------------------------------------------

json HitsToJson(const v1::SearchResponse& resp) {
  json hits = json::array();
  for (const auto& h : resp.hits()) {
    json j{{"id", h.id()}, {"score", h.score()}};
    if (!h.text().empty()) j["text"] = h.text();
    if (!h.metadata().empty()) j["metadata"] = MetadataToJson(h.metadata());
    hits.push_back(std::move(j));
  }
  return hits;
}

// The --collection and positional ids arguments shared by get and delete.
struct IdsArgs {
  std::string collection;
  std::vector<std::string> ids;
};

void AddIdsOptions(CLI::App* c, IdsArgs* a) {
  c->add_option("--collection", a->collection, "Collection")->required();
  c->add_option("ids", a->ids, "Document ids")->required();
}

template <typename Request>
Request IdsRequest(const IdsArgs& a) {
  Request req;
  req.set_collection(a.collection);
  for (const auto& id : a.ids) req.add_ids(id);
  return req;
}

void RegisterDocuments(CLI::App& app) {
  {
    auto f = std::make_shared<ClientFlags>();
    auto collection = std::make_shared<std::string>();
    auto path = std::make_shared<std::string>();
    auto batch = std::make_shared<int>(64);
    CLI::App* c =
        AddClientCommand(&app, "ingest", "Stream a JSON-lines file of documents in", f.get());
    f->timeout_s = 3600;
    c->add_option("--collection", *collection, "Collection")->required();
    c->add_option("file", *path, "JSON lines: {\"id\",\"text\",\"metadata\"}")->required();
    c->add_option("--batch", *batch, "Documents per stream message")->capture_default_str();
    c->callback([=] { ExitIfError(Ingest(*f, *collection, *path, std::max(1, *batch))); });
  }
  {
    auto f = std::make_shared<ClientFlags>();
    auto collection = std::make_shared<std::string>();
    auto query = std::make_shared<std::string>();
    auto filter = std::make_shared<std::string>();
    auto instruction = std::make_shared<std::string>();
    auto k = std::make_shared<int>(10);
    auto ef_search = std::make_shared<int>(0);
    auto nprobe = std::make_shared<int>(0);
    auto no_text = std::make_shared<bool>(false);
    CLI::App* c = AddClientCommand(&app, "search", "Near-text search", f.get());
    c->add_option("--collection", *collection, "Collection")->required();
    c->add_option("query", *query, "Query text")->required();
    c->add_option("--filter", *filter, "Metadata filter (JSON)");
    c->add_option("-k", *k, "Results")->capture_default_str();
    c->add_option("--ef-search", *ef_search, "HNSW beam width (0 = the index's default)");
    c->add_option("--nprobe", *nprobe, "IVF lists probed (0 = the index's default)");
    auto* instr = c->add_option("--instruction", *instruction, "Override the query instruction");
    c->add_flag("--no-text", *no_text, "Do not return texts and metadata");
    c->callback([=] {
      v1::NearTextRequest req;
      req.set_collection(*collection);
      req.set_query(*query);
      req.set_k(*k);
      req.set_include_text(!*no_text);
      req.set_include_metadata(!*no_text);
      if (instr->count() > 0) req.set_instruction(*instruction);
      req.set_ef_search(*ef_search);
      req.set_nprobe(*nprobe);
      // The server parses it (db::ParseFilterJson: the one filter parser).
      req.set_filter_json(*filter);
      const auto resp = CallOrExit<v1::Search>(*f, &v1::Search::Stub::NearText, req);
      for (const auto& h : HitsToJson(resp)) Print(h);
    });
  }
  {
    auto f = std::make_shared<ClientFlags>();
    auto args = std::make_shared<IdsArgs>();
    CLI::App* c = AddClientCommand(&app, "get", "Get documents by id", f.get());
    AddIdsOptions(c, args.get());
    c->callback([=] {
      const auto req = IdsRequest<v1::GetRequest>(*args);
      const auto resp = CallOrExit<v1::Documents>(*f, &v1::Documents::Stub::Get, req);
      for (const auto& d : resp.documents()) {
        Print(json{{"id", d.id()}, {"text", d.text()}, {"metadata", MetadataToJson(d.metadata())}});
      }
      for (const auto& id : resp.missing_ids())
        std::fprintf(stderr, "neodb: '%s' not found\n", id.c_str());
      if (resp.missing_ids_size() > 0) throw ExitRequest{1};
    });
  }
  {
    auto f = std::make_shared<ClientFlags>();
    auto args = std::make_shared<IdsArgs>();
    CLI::App* c = AddClientCommand(&app, "delete", "Delete documents by id", f.get());
    AddIdsOptions(c, args.get());
    c->callback([=] {
      const auto req = IdsRequest<v1::DeleteRequest>(*args);
      const auto resp = CallOrExit<v1::Documents>(*f, &v1::Documents::Stub::Delete, req);
      Print(json{{"deleted", resp.deleted()}});
    });
  }
}

// --- admin ------------------------------------------------------------------

void RegisterAdmin(CLI::App& app) {
  {
    auto f = std::make_shared<ClientFlags>();
    CLI::App* c = AddClientCommand(&app, "stats", "Server statistics", f.get());
    c->callback([=] {
      const auto r = CallOrExit<v1::Admin>(*f, &v1::Admin::Stub::Stats, v1::StatsRequest());
      Print(json{{"model_id", r.model_id()},
                 {"dimension", r.dimension()},
                 {"collections", r.collections()},
                 {"documents", r.documents()},
                 {"snapshot_loads", r.snapshot_loads()},
                 {"index_rebuilds", r.index_rebuilds()},
                 {"replayed_changes", r.replayed_changes()},
                 {"snapshots_written", r.snapshots_written()},
                 {"embed_queue_depth", r.embed_queue_depth()},
                 {"embedded_texts", r.embedded_texts()},
                 {"embedded_tokens", r.embedded_tokens()},
                 {"encoder_seconds", r.encoder_seconds()},
                 {"device", r.device()},
                 {"cpu_kernels", r.cpu_kernels()}});
    });
  }
  {
    auto f = std::make_shared<ClientFlags>();
    CLI::App* c = AddClientCommand(&app, "snapshot", "Snapshot every index now", f.get());
    c->callback([=] {
      const auto r = CallOrExit<v1::Admin>(*f, &v1::Admin::Stub::Snapshot, v1::SnapshotRequest());
      Print(json{{"collections", r.collections()}, {"covered_seq", r.covered_seq()}});
    });
  }
  {
    auto f = std::make_shared<ClientFlags>();
    auto collection = std::make_shared<std::string>();
    auto model = std::make_shared<std::string>();
    auto no_wait = std::make_shared<bool>(false);
    CLI::App* c = AddClientCommand(&app, "reindex",
                                   "Re-embed a collection (optionally with a new model)", f.get());
    c->add_option("--collection", *collection, "Collection")->required();
    c->add_option("--model", *model,
                  "Model checkpoint directory (a path on this machine is sent absolute)");
    c->add_flag("--no-wait", *no_wait, "Return once started");
    c->callback([=] {
      auto stub = v1::Admin::NewStub(Connect(*f));
      {
        v1::ReindexRequest req;
        req.set_collection(*collection);
        // The collection records this directory: make a local path absolute
        // so it means the same whatever directory the server runs in.
        std::error_code ec;
        const bool local = !model->empty() && std::filesystem::exists(*model, ec);
        req.set_model_dir(local ? std::filesystem::absolute(*model).string() : *model);
        CallOrExit(*stub, *f, &v1::Admin::Stub::Reindex, req);
      }
      if (*no_wait) return;
      while (true) {
        v1::ReindexStatusRequest req;
        req.set_collection(*collection);
        const auto r = CallOrExit(*stub, *f, &v1::Admin::Stub::ReindexStatus, req);
        std::fprintf(stderr, "\rneodb reindex: %llu / %llu",
                     static_cast<unsigned long long>(r.done()),
                     static_cast<unsigned long long>(r.total()));
        if (r.state() == v1::ReindexStatusResponse::DONE) {
          std::fprintf(stderr, "\n");
          Print(json{{"state", "done"}, {"documents", r.total()}, {"model_id", r.model_id()}});
          return;
        }
        if (r.state() == v1::ReindexStatusResponse::FAILED) {
          std::fprintf(stderr, "\n");
          ExitIfError(absl::InternalError(absl::StrCat("reindex failed: ", r.error())));
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
      }
    });
  }
}

}  // namespace

void RegisterClientCommands(CLI::App& app) {
  RegisterCollections(app);
  RegisterDocuments(app);
  RegisterAdmin(app);
}

}  // namespace neodb::cli
