// The HTTP server (api/http/) in process: a Database over a fake embedder,
// the gRPC server's services, the JSON API and the OpenAI embeddings on
// 127.0.0.1:0, called with cpp-httplib's client. Status codes and JSON
// bodies: every unary method's route, one table of calls answered alike
// over gRPC and JSON (transport_cases.h), API keys and roles, bad bodies (4xx
// with a clear message, server still up), the embeddings' shapes and their
// equality with Embedding.Embed, the OpenAPI document against the routes.
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <future>
#include <memory>
#include <regex>
#include <set>
#include <string>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "api/auth/api_keys.h"
#include "api/grpc_status.h"
#include "api/http/http_status.h"
#include "api/http/proto_json.h"
#include "api/http/console_assets.h"
#include "api/http/http_server.h"
#include "api/http/json_rpc.h"
#include "api/server.h"
#include "engine/database.h"
#include "engine/fake_embedder.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/dynamic_message.h"
#include "grpcpp/generic/generic_stub.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "httplib.h"
#include "neodb/v1/neodb.pb.h"
#include "nlohmann/json.hpp"
#include "tests/api/transport_cases.h"
#include "zlib.h"

namespace neodb::api {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

constexpr char kRead[] = "read-key", kWrite[] = "write-key", kAdmin[] = "admin-key";

struct Reply {
  int status = 0;
  Json body;
  std::string raw;
};

class HttpApiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           absl::StrCat("neodb_http_api_",
                        ::testing::UnitTest::GetInstance()->current_test_info()->name(), "_",
                        getpid());
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "models");
    {
      std::ofstream keys(dir_ / "keys");
      keys << KeyFileLine(kRead, Role::kRead, "reader") << "\n"
           << KeyFileLine(kWrite, Role::kWrite, "writer") << "\n"
           << KeyFileLine(kAdmin, Role::kAdmin, "admin") << "\n";
    }
    auto ring = KeyRing::Open((dir_ / "keys").string());
    ASSERT_TRUE(ring.ok()) << ring.status();
    engine::DatabaseOptions o;
    o.data_dir = (dir_ / "data").string();
    o.sync_writes = false;
    o.snapshot_interval = absl::ZeroDuration();
    auto db = engine::Database::Open(o, std::make_unique<engine::FakeEmbedder>(16, 32, 1));
    ASSERT_TRUE(db.ok()) << db.status();
    db_ = std::move(*db);
    ServerOptions so;
    so.keys = *ring;
    so.limits.models_dir = (dir_ / "models").string();
    auto server = Server::Start(db_.get(), so);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = std::move(*server);
    rpc_ = std::make_unique<JsonRpc>(server_->services(), *ring);
    auto http = HttpServer::Start({.listen = "127.0.0.1:0",
                                   .threads = 4,
                                   .max_body_bytes = 1 << 20,
                                   .metrics = [] { return std::string("neodb_up 1\n"); },
                                   .rpc = rpc_.get(),
                                   .request_metrics = &metrics_});
    ASSERT_TRUE(http.ok()) << http.status();
    http_ = std::move(*http);
    client_ = std::make_unique<httplib::Client>("127.0.0.1", http_->port());
  }
  void TearDown() override {
    client_.reset();
    http_.reset();
    rpc_.reset();
    server_.reset();
    db_.reset();
    fs::remove_all(dir_);
  }

  Reply Post(const std::string& path, const std::string& body, const std::string& key) {
    httplib::Headers h;
    if (!key.empty()) h.emplace("Authorization", absl::StrCat("Bearer ", key));
    auto r = client_->Post(path.c_str(), h, body, "application/json");
    Reply out;
    if (!r) return out;
    out.status = r->status;
    out.raw = r->body;
    out.body = Json::parse(r->body, nullptr, false);
    return out;
  }
  Reply Rpc(const std::string& method, const Json& body, const std::string& key = kAdmin) {
    return Post("/v1/rpc/" + method, body.dump(), key);
  }
  Reply Get(const std::string& path) {
    auto r = client_->Get(path.c_str());
    Reply out;
    if (!r) return out;
    out.status = r->status;
    out.raw = r->body;
    out.body = Json::parse(r->body, nullptr, false);
    return out;
  }
  // A collection with three documents.
  void MakeDocs() {
    Reply c = Rpc("Collections/Create", {{"spec", {{"name", "docs"}}}});
    ASSERT_EQ(c.status, 200) << c.raw;
    Json docs = Json::array();
    docs.push_back({{"id", "a"}, {"text", "the cat sat on the mat"},
                    {"metadata", {{"year", {{"int_value", "2020"}}}}}});
    docs.push_back({{"id", "b"}, {"text", "a dog ran in the park"},
                    {"metadata", {{"year", {{"int_value", "2024"}}}}}});
    docs.push_back({{"id", "c"}, {"text", "stocks fell on monday"},
                    {"metadata", {{"year", {{"int_value", "2024"}}}}}});
    Reply u = Rpc("Documents/Upsert", {{"collection", "docs"}, {"documents", docs}}, kWrite);
    ASSERT_EQ(u.status, 200) << u.raw;
    EXPECT_EQ(u.body["ids"], Json({"a", "b", "c"}));
  }

  fs::path dir_;
  RequestMetrics metrics_;  // the HTTP server's (transport="http")
  std::unique_ptr<engine::Database> db_;
  std::unique_ptr<Server> server_;
  std::unique_ptr<JsonRpc> rpc_;
  std::unique_ptr<HttpServer> http_;
  std::unique_ptr<httplib::Client> client_;
};

TEST_F(HttpApiTest, EveryUnaryMethodOfTheProtoIsRouted) {
  std::set<std::string> unary, streaming;
  const auto* file = google::protobuf::DescriptorPool::generated_pool()->FindFileByName(
      "neodb/v1/neodb.proto");
  ASSERT_NE(file, nullptr);
  for (int s = 0; s < file->service_count(); ++s) {
    for (int m = 0; m < file->service(s)->method_count(); ++m) {
      const auto* md = file->service(s)->method(m);
      const std::string full = absl::StrCat("/", file->service(s)->full_name(), "/", md->name());
      (md->client_streaming() || md->server_streaming() ? streaming : unary).insert(full);
    }
  }
  const std::vector<std::string> routed = rpc_->Methods();
  EXPECT_EQ(std::set<std::string>(routed.begin(), routed.end()), unary);
  EXPECT_EQ(streaming, (std::set<std::string>{"/neodb.v1.Documents/BulkIngest",
                                              "/neodb.v1.Documents/Ingest"}));
  Reply r = Rpc("Documents/BulkIngest", Json::object());
  EXPECT_EQ(r.status, 404) << r.raw;
  EXPECT_NE(r.raw.find("gRPC only"), std::string::npos) << r.raw;
}

// Calls `method` ("Documents/Count") over gRPC with `request_json` parsed
// into its request message, as the admin; the response as JSON when OK.
std::pair<absl::Status, std::string> CallGrpc(int port, const std::string& method,
                                              const std::string& request_json) {
  const auto* pool = google::protobuf::DescriptorPool::generated_pool();
  const size_t slash = method.find('/');
  const auto* service = pool->FindServiceByName("neodb.v1." + method.substr(0, slash));
  if (service == nullptr) return {absl::InternalError("no service " + method), ""};
  const auto* m = service->FindMethodByName(method.substr(slash + 1));
  if (m == nullptr) return {absl::InternalError("no method " + method), ""};
  auto* factory = google::protobuf::MessageFactory::generated_factory();
  std::unique_ptr<google::protobuf::Message> req(factory->GetPrototype(m->input_type())->New());
  std::unique_ptr<google::protobuf::Message> resp(factory->GetPrototype(m->output_type())->New());
  if (absl::Status s = JsonToMessage(request_json, req.get()); !s.ok()) {
    return {absl::InternalError(absl::StrCat("the case's JSON: ", s.message())), ""};
  }
  const std::string bytes = req->SerializeAsString();
  grpc::Slice slice(bytes);
  grpc::ByteBuffer request(&slice, 1), response;
  auto channel = grpc::CreateChannel(absl::StrCat("127.0.0.1:", port),
                                     grpc::InsecureChannelCredentials());
  grpc::GenericStub stub(channel);
  grpc::ClientContext ctx;
  ctx.AddMetadata("authorization", absl::StrCat("Bearer ", kAdmin));
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
  std::promise<grpc::Status> done;
  stub.UnaryCall(&ctx, absl::StrCat("/", service->full_name(), "/", m->name()),
                 grpc::StubOptions(), &request, &response,
                 [&done](grpc::Status st) { done.set_value(std::move(st)); });
  const grpc::Status st = done.get_future().get();
  if (!st.ok()) return {FromGrpcStatus(st), ""};
  std::vector<grpc::Slice> slices;
  if (!response.Dump(&slices).ok()) return {absl::InternalError("unreadable response"), ""};
  std::string out;
  for (const auto& s : slices) out.append(reinterpret_cast<const char*>(s.begin()), s.size());
  if (!resp->ParseFromString(out)) return {absl::InternalError("unparsable response"), ""};
  return {absl::OkStatus(), MessageToJson(*resp)};
}

// One table (transport_cases.h), both transports: the same code, the same
// error message, the same answer.
TEST_F(HttpApiTest, TheSameCasesAnswerAlikeOverGrpcAndJson) {
  MakeDocs();
  for (const TransportCase& c : TransportCases()) {
    SCOPED_TRACE(absl::StrCat(c.method, " ", c.request));
    auto [grpc_status, grpc_body] = CallGrpc(server_->port(), c.method, c.request);
    EXPECT_EQ(grpc_status.code(), c.code) << grpc_status;
    const Reply http = Post(absl::StrCat("/v1/rpc/", c.method), c.request, kAdmin);
    EXPECT_EQ(http.status, HttpStatusFor(c.code)) << http.raw;
    if (c.code == absl::StatusCode::kOk) {
      EXPECT_EQ(http.body, Json::parse(grpc_body, nullptr, false)) << grpc_body;
    } else {
      EXPECT_EQ(http.body["error"]["status"], absl::StatusCodeToString(c.code)) << http.raw;
      EXPECT_EQ(http.body["error"]["message"], std::string(grpc_status.message())) << http.raw;
    }
  }
}

TEST_F(HttpApiTest, HealthMetricsAndUnknownRoutes) {
  Reply h = Get("/healthz");
  EXPECT_EQ(h.status, 200);
  EXPECT_EQ(h.body["status"], "SERVING");
  Reply m = Get("/metrics");
  EXPECT_EQ(m.status, 200);
  EXPECT_EQ(m.raw, "neodb_up 1\n");
  Reply n = Get("/nothing");
  EXPECT_EQ(n.status, 404);
  EXPECT_EQ(n.body["error"]["status"], "NOT_FOUND") << n.raw;
}

TEST_F(HttpApiTest, CollectionsDocumentsAndStats) {
  MakeDocs();
  Reply list = Rpc("Collections/List", Json::object(), kRead);
  ASSERT_EQ(list.status, 200) << list.raw;
  ASSERT_EQ(list.body["collections"].size(), 1u);
  EXPECT_EQ(list.body["collections"][0]["spec"]["name"], "docs");
  EXPECT_EQ(list.body["collections"][0]["count"], "3");  // uint64: a string in proto3 JSON

  Reply d = Rpc("Collections/Describe", {{"name", "docs"}}, kRead);
  ASSERT_EQ(d.status, 200) << d.raw;
  EXPECT_EQ(d.body["info"]["dimension"], 16);

  Reply g = Rpc("Documents/Get", {{"collection", "docs"}, {"ids", {"a", "zz"}}}, kRead);
  ASSERT_EQ(g.status, 200) << g.raw;
  ASSERT_EQ(g.body["documents"].size(), 1u);
  EXPECT_EQ(g.body["documents"][0]["text"], "the cat sat on the mat");  // bytes as text
  EXPECT_EQ(g.body["documents"][0]["metadata"]["year"]["int_value"], "2020");
  EXPECT_EQ(g.body["missing_ids"], Json::array({"zz"}));

  Reply s = Rpc("Admin/Stats", Json::object(), kRead);
  ASSERT_EQ(s.status, 200) << s.raw;
  EXPECT_EQ(s.body["collections"], "1");
  EXPECT_EQ(s.body["documents"], "3");
  // The models directory is for admin keys only, over HTTP as over gRPC.
  EXPECT_EQ(s.body["models_dir"], "");
  Reply sa = Rpc("Admin/Stats", Json::object(), kAdmin);
  EXPECT_NE(sa.body["models_dir"], "") << sa.raw;

  Reply drop = Rpc("Collections/Drop", {{"name", "docs"}});
  EXPECT_EQ(drop.status, 200) << drop.raw;
  Reply gone = Rpc("Collections/Describe", {{"name", "docs"}}, kRead);
  EXPECT_EQ(gone.status, 404) << gone.raw;
  EXPECT_EQ(gone.body["error"]["status"], "NOT_FOUND");
  Reply again = Rpc("Collections/Create", {{"spec", {{"name", "twice"}}}});
  ASSERT_EQ(again.status, 200) << again.raw;
  Reply dup = Rpc("Collections/Create", {{"spec", {{"name", "twice"}}}});
  EXPECT_EQ(dup.status, 409) << dup.raw;
}

TEST_F(HttpApiTest, SearchInEveryMode) {
  MakeDocs();
  for (const char* mode : {"hybrid", "keyword", "vector"}) {
    Reply r = Rpc("Search/NearText",
                  {{"collection", "docs"},
                   {"query", "cat on a mat"},
                   {"k", 2},
                   {"mode", mode},
                   {"explain", true},
                   {"include_text", true}},
                  kRead);
    ASSERT_EQ(r.status, 200) << mode << " " << r.raw;
    EXPECT_EQ(r.body["mode"], mode);
    ASSERT_FALSE(r.body["hits"].empty()) << mode;
    EXPECT_EQ(r.body["hits"][0]["id"], "a") << mode << " " << r.raw;
    EXPECT_EQ(r.body["hits"][0]["text"], "the cat sat on the mat");
    EXPECT_TRUE(r.body["hits"][0]["explain"].is_object()) << r.raw;
  }
  // A filter in its JSON form and as the proto's message.
  Reply f = Rpc("Search/NearText",
                {{"collection", "docs"},
                 {"query", "cat"},
                 {"mode", "vector"},
                 {"filter_json", R"({"field":"year","gte":2021})"}},
                kRead);
  ASSERT_EQ(f.status, 200) << f.raw;
  for (const auto& h : f.body["hits"]) EXPECT_NE(h["id"], "a");
  Reply v = Rpc("Documents/Get",
                {{"collection", "docs"}, {"ids", Json::array({"b"})}, {"include_vector", true}},
                kRead);
  ASSERT_EQ(v.status, 200) << v.raw;
  Reply nv = Rpc("Search/NearVector",
                 {{"collection", "docs"}, {"vector", v.body["documents"][0]["vector"]}, {"k", 1}},
                 kRead);
  ASSERT_EQ(nv.status, 200) << nv.raw;
  EXPECT_EQ(nv.body["hits"][0]["id"], "b");
  Reply bad = Rpc("Search/NearText", {{"collection", "docs"}, {"query", "x"}, {"mode", "psychic"}},
                  kRead);
  EXPECT_EQ(bad.status, 400) << bad.raw;
}

TEST_F(HttpApiTest, KeysAndRolesAsForGrpc) {
  Reply none = Rpc("Collections/List", Json::object(), "");
  EXPECT_EQ(none.status, 401) << none.raw;
  EXPECT_EQ(none.body["error"]["status"], "UNAUTHENTICATED");
  EXPECT_NE(none.raw.find("needs an API key"), std::string::npos);
  Reply wrong = Rpc("Collections/List", Json::object(), "not-a-key");
  EXPECT_EQ(wrong.status, 401) << wrong.raw;
  Reply low = Rpc("Collections/Create", {{"spec", {{"name", "x"}}}}, kWrite);
  EXPECT_EQ(low.status, 403) << low.raw;
  EXPECT_NE(low.raw.find("needs admin"), std::string::npos) << low.raw;
  Reply emb = Post("/v1/embeddings", R"({"input":"hi"})", "");
  EXPECT_EQ(emb.status, 401) << emb.raw;
  // Nothing was created by the refused call.
  Reply list = Rpc("Collections/List", Json::object(), kRead);
  EXPECT_TRUE(list.body["collections"].empty()) << list.raw;
}

TEST_F(HttpApiTest, BadBodiesAre4xxWithAClearMessage) {
  Reply notjson = Post("/v1/rpc/Collections/Create", "{not json", kAdmin);
  EXPECT_EQ(notjson.status, 400) << notjson.raw;
  EXPECT_NE(notjson.raw.find("not a valid neodb.v1.CreateCollectionRequest"), std::string::npos)
      << notjson.raw;
  Reply unknown = Rpc("Collections/Create", {{"spec", {{"name", "x"}}}, {"colour", "red"}});
  EXPECT_EQ(unknown.status, 400) << unknown.raw;
  EXPECT_NE(unknown.raw.find("colour"), std::string::npos) << unknown.raw;
  Reply type = Rpc("Search/NearText", {{"collection", "docs"}, {"k", "many"}}, kRead);
  EXPECT_EQ(type.status, 400) << type.raw;
  Reply array = Post("/v1/rpc/Admin/Stats", "[1,2]", kRead);
  EXPECT_EQ(array.status, 400) << array.raw;
  Reply big = Post("/v1/rpc/Admin/Stats", std::string(2 << 20, ' '), kRead);
  EXPECT_EQ(big.status, 413) << big.raw;
  EXPECT_EQ(big.body["error"]["code"], 413) << big.raw;
  EXPECT_NE(big.raw.find("over the server's limit of 1048576 bytes"), std::string::npos)
      << big.raw;
  Reply big_embed = Post("/v1/embeddings", std::string(2 << 20, 'x'), kRead);
  EXPECT_EQ(big_embed.status, 413) << big_embed.raw;
  // Chunked, so no Content-Length announces the size: refused all the same.
  {
    httplib::Headers h = {{"Authorization", absl::StrCat("Bearer ", kRead)}};
    auto chunked = client_->Post(
        "/v1/rpc/Admin/Stats", h,
        [](size_t offset, httplib::DataSink& sink) {
          const std::string piece(64 << 10, ' ');
          for (int i = 0; i < 32; ++i) {
            if (!sink.write(piece.data(), piece.size())) return false;
          }
          sink.done();
          return true;
        },
        "application/json");
    // The server answers 413 as soon as the body passes the limit and closes
    // the connection; a client still writing then sees its write fail
    // (Canceled) instead of the answer. Which one it sees depends on timing:
    // both are the server refusing the body.
    if (chunked) {
      EXPECT_EQ(chunked->status, 413) << chunked->body;
    } else {
      EXPECT_EQ(chunked.error(), httplib::Error::Canceled) << httplib::to_string(chunked.error());
    }
  }
  Reply method = Rpc("Collections/Explode", Json::object());
  EXPECT_EQ(method.status, 404) << method.raw;
  // Still serving.
  EXPECT_EQ(Rpc("Admin/Stats", Json::object(), kRead).status, 200);
  EXPECT_EQ(Post("/v1/rpc/Admin/Stats", "", kRead).status, 200);  // empty body = {}
}

// `text` gzip-compressed (a gzip header, as Content-Encoding: gzip means).
std::string Gzip(const std::string& text) {
  z_stream z{};
  EXPECT_EQ(deflateInit2(&z, Z_BEST_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
  std::string out(deflateBound(&z, text.size()), '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  z.avail_in = text.size();
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = out.size();
  EXPECT_EQ(deflate(&z, Z_FINISH), Z_STREAM_END);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

TEST_F(HttpApiTest, AGzipBodyIsMeasuredAsItInflates) {
  httplib::Headers h = {{"Authorization", absl::StrCat("Bearer ", kAdmin)},
                        {"Content-Encoding", "gzip"}};
  // A small one is read as JSON like any other.
  auto small = client_->Post("/v1/rpc/Collections/Create", h,
                             Gzip(R"({"spec":{"name":"zipped"}})"), "application/json");
  ASSERT_TRUE(small) << httplib::to_string(small.error());
  EXPECT_EQ(small->status, 200) << small->body;
  // 4 MiB of JSON whitespace in about 4 KiB: under the 1 MiB limit as sent,
  // over it as inflated. Refused with 413 and the limit named; the server
  // stays up.
  const std::string bomb = Gzip(std::string(4 << 20, ' ') + "{}");
  ASSERT_LT(bomb.size(), size_t{64} << 10);
  auto big = client_->Post("/v1/rpc/Admin/Stats", h, bomb, "application/json");
  ASSERT_TRUE(big) << httplib::to_string(big.error());
  EXPECT_EQ(big->status, 413) << big->body;
  const Json body = Json::parse(big->body, nullptr, false);
  EXPECT_EQ(body["error"]["code"], 413) << big->body;
  EXPECT_NE(big->body.find("over the server's limit of 1048576 bytes"), std::string::npos)
      << big->body;
  auto big_embed = client_->Post("/v1/embeddings", h, bomb, "application/json");
  ASSERT_TRUE(big_embed) << httplib::to_string(big_embed.error());
  EXPECT_EQ(big_embed->status, 413) << big_embed->body;
  EXPECT_EQ(Get("/healthz").status, 200);
  EXPECT_EQ(Rpc("Collections/Describe", {{"name", "zipped"}}, kRead).status, 200);
}

TEST_F(HttpApiTest, HttpCallsAreInTheRequestMetrics) {
  MakeDocs();  // Collections/Create and Documents/Upsert, OK
  EXPECT_EQ(Rpc("Collections/Describe", {{"name", "nope"}}, kRead).status, 404);
  EXPECT_EQ(Rpc("Collections/Drop", {{"name", "docs"}}, kRead).status, 403);
  EXPECT_EQ(Rpc("Search/NearText", {{"collection", "docs"}, {"mode", "psychic"}}, kRead).status,
            400);
  EXPECT_EQ(Rpc("Collections/Explode", Json::object()).status, 404);  // no such method
  EXPECT_EQ(Post("/v1/embeddings", R"({"input":"a cat"})", kRead).status, 200);
  const std::string text = metrics_.Render();
  for (const char* line : {
           R"(neodb_requests_total{transport="http",method="/neodb.v1.Collections/Create",code="OK"} 1)",
           R"(neodb_requests_total{transport="http",method="/neodb.v1.Documents/Upsert",code="OK"} 1)",
           R"(neodb_requests_total{transport="http",method="/neodb.v1.Collections/Describe",code="NOT_FOUND"} 1)",
           R"(neodb_requests_total{transport="http",method="/neodb.v1.Collections/Drop",code="PERMISSION_DENIED"} 1)",
           R"(neodb_requests_total{transport="http",method="/neodb.v1.Search/NearText",code="INVALID_ARGUMENT"} 1)",
           R"(neodb_requests_total{transport="http",method="/v1/embeddings",code="OK"} 1)",
           R"(neodb_request_duration_seconds_count{transport="http",method="/neodb.v1.Documents/Upsert"} 1)",
       }) {
    EXPECT_NE(text.find(std::string(line) + "\n"), std::string::npos) << line << "\n" << text;
  }
  // A method that does not exist is not a label value.
  EXPECT_EQ(text.find("Explode"), std::string::npos) << text;
  // These calls came over HTTP only.
  EXPECT_EQ(text.find("transport=\"grpc\""), std::string::npos) << text;
}

TEST_F(HttpApiTest, TheWebConsoleIsServedFromTheBinary) {
  // Public (no key), as the page holds no data; HTML with a strict policy.
  auto page = client_->Get("/");
  ASSERT_TRUE(page);
  EXPECT_EQ(page->status, 200);
  EXPECT_EQ(page->get_header_value("Content-Type"), "text/html; charset=utf-8");
  EXPECT_NE(page->get_header_value("Content-Security-Policy").find("script-src 'self'"),
            std::string::npos);
  EXPECT_EQ(page->get_header_value("X-Content-Type-Options"), "nosniff");
  EXPECT_NE(page->body.find("<title>neodb console</title>"), std::string::npos);
  // Every file the page and its scripts name is served, with its type.
  std::set<std::string> named;
  const std::regex ref(R"re((?:src|href)="/console/([^"]+)")re");
  for (std::sregex_iterator i(page->body.begin(), page->body.end(), ref), end; i != end; ++i) {
    named.insert((*i)[1]);
  }
  const std::regex import(R"re(from '\./([A-Za-z0-9_.-]+)')re");
  for (size_t f = 0; f < kConsoleFileCount; ++f) {
    const std::string text(reinterpret_cast<const char*>(kConsoleFiles[f].data),
                           kConsoleFiles[f].size);
    for (std::sregex_iterator i(text.begin(), text.end(), import), end; i != end; ++i) {
      named.insert((*i)[1]);
    }
    // Every embedded file is one the server will serve.
    EXPECT_TRUE(ConsoleContentType(kConsoleFiles[f].name).has_value()) << kConsoleFiles[f].name;
  }
  EXPECT_TRUE(named.count("app.js") && named.count("api.js") && named.count("console.css"))
      << named.size();
  for (const std::string& name : named) {
    auto r = client_->Get(("/console/" + name).c_str());
    ASSERT_TRUE(r) << name;
    EXPECT_EQ(r->status, 200) << name;
    EXPECT_EQ(r->get_header_value("Content-Type"), *ConsoleContentType(name)) << name;
    const auto file = FindConsoleFile(name);
    ASSERT_TRUE(file.has_value()) << name;
    EXPECT_EQ(r->body.size(), file->size) << name;
  }
  EXPECT_EQ(*ConsoleContentType("app.js"), "text/javascript; charset=utf-8");
  EXPECT_EQ(*ConsoleContentType("console.css"), "text/css; charset=utf-8");
  EXPECT_EQ(Get("/console/nothing.js").status, 404);
  EXPECT_EQ(Get("/console/..%2Fhttp_server.cc").status, 404);
}

TEST_F(HttpApiTest, OpenAiEmbeddingsAreEmbedsVectors) {
  MakeDocs();
  Reply one = Post("/v1/embeddings", R"({"input":"the cat","model":"default"})", kRead);
  ASSERT_EQ(one.status, 200) << one.raw;
  EXPECT_EQ(one.body["object"], "list");
  ASSERT_EQ(one.body["data"].size(), 1u);
  EXPECT_EQ(one.body["data"][0]["object"], "embedding");
  EXPECT_EQ(one.body["data"][0]["index"], 0);
  ASSERT_EQ(one.body["data"][0]["embedding"].size(), 16u);
  EXPECT_EQ(one.body["usage"]["prompt_tokens"], 4);  // two words + [CLS] [SEP]
  EXPECT_EQ(one.body["usage"]["total_tokens"], 4);

  // The same vectors as Embedding.Embed with the same settings, bit for bit.
  Reply embed = Rpc("Embedding/Embed",
                    {{"texts", {"the cat", "a dog"}}, {"pooling", "POOLING_MEAN"},
                     {"normalize", true}},
                    kRead);
  ASSERT_EQ(embed.status, 200) << embed.raw;
  Reply two = Post("/v1/embeddings", R"({"input":["the cat","a dog"]})", kRead);
  ASSERT_EQ(two.status, 200) << two.raw;
  Reply b64 =
      Post("/v1/embeddings", R"({"input":["the cat","a dog"],"encoding_format":"base64"})", kRead);
  ASSERT_EQ(b64.status, 200) << b64.raw;
  EXPECT_EQ(two.body["model"], embed.body["model_id"]);
  for (int i = 0; i < 2; ++i) {
    const Json& want = embed.body["vectors"][i]["values"];
    const Json& got = two.body["data"][i]["embedding"];
    ASSERT_EQ(got.size(), want.size());
    std::string bytes;
    ASSERT_TRUE(absl::Base64Unescape(b64.body["data"][i]["embedding"].get<std::string>(), &bytes));
    ASSERT_EQ(bytes.size(), want.size() * sizeof(float));
    for (size_t j = 0; j < want.size(); ++j) {
      const float w = want[j].get<float>();
      EXPECT_EQ(got[j].get<float>(), w) << i << "," << j;
      float f;
      std::memcpy(&f, bytes.data() + j * sizeof(float), sizeof f);
      EXPECT_EQ(f, w) << i << "," << j;
    }
  }
  // A collection's name as the model: its settings, the same model here.
  Reply coll = Post("/v1/embeddings", R"({"input":"the cat","model":"docs"})", kRead);
  ASSERT_EQ(coll.status, 200) << coll.raw;
  EXPECT_EQ(coll.body["model"], "docs");

  Reply nomodel = Post("/v1/embeddings", R"({"input":"x","model":"gpt-9"})", kRead);
  EXPECT_EQ(nomodel.status, 404) << nomodel.raw;
  Reply tokens = Post("/v1/embeddings", R"({"input":[[1,2,3]]})", kRead);
  EXPECT_EQ(tokens.status, 400) << tokens.raw;
  Reply format = Post("/v1/embeddings", R"({"input":"x","encoding_format":"int8"})", kRead);
  EXPECT_EQ(format.status, 400) << format.raw;
  Reply noinput = Post("/v1/embeddings", R"({"model":"default"})", kRead);
  EXPECT_EQ(noinput.status, 400) << noinput.raw;
  Reply garbage = Post("/v1/embeddings", "embed this", kRead);
  EXPECT_EQ(garbage.status, 400) << garbage.raw;
}

TEST_F(HttpApiTest, OpenApiDocumentDescribesTheRoutes) {
  Reply doc = Get("/openapi.json");
  ASSERT_EQ(doc.status, 200);
  ASSERT_TRUE(doc.body.is_object()) << doc.raw.substr(0, 200);
  EXPECT_EQ(doc.body["openapi"], "3.0.3");
  for (const std::string& full : rpc_->Methods()) {
    // "/neodb.v1.Search/NearText" -> "/v1/rpc/Search/NearText"
    const std::string path = "/v1/rpc/" + full.substr(std::strlen("/neodb.v1."));
    EXPECT_TRUE(doc.body["paths"].contains(path)) << path;
  }
  EXPECT_TRUE(doc.body["paths"].contains("/v1/embeddings"));
  // Every $ref names a schema the document has.
  std::function<void(const Json&)> check = [&](const Json& j) {
    if (j.is_object()) {
      for (const auto& [k, v] : j.items()) {
        if (k == "$ref") {
          const std::string name =
              v.get<std::string>().substr(std::strlen("#/components/schemas/"));
          EXPECT_TRUE(doc.body["components"]["schemas"].contains(name)) << name;
        } else {
          check(v);
        }
      }
    } else if (j.is_array()) {
      for (const auto& v : j) check(v);
    }
  };
  check(doc.body);
  const Json& text = doc.body["components"]["schemas"]["neodb.v1.Document"]["properties"]["text"];
  EXPECT_EQ(text["type"], "string");
}

TEST(HttpServerTest, RefusesTheJsonApiOffLoopbackAndABusyPort) {
  std::vector<std::unique_ptr<grpc::Service>> none;
  JsonRpc rpc(none, nullptr);
  auto off = HttpServer::Start({.listen = "0.0.0.0:0", .rpc = &rpc});
  EXPECT_EQ(off.status().code(), absl::StatusCode::kFailedPrecondition) << off.status();
  EXPECT_NE(off.status().message().find("without TLS and without API keys"), std::string::npos)
      << off.status();
  // Half a TLS configuration is a mistake, not plain HTTP.
  auto half = HttpServer::Start({.listen = "127.0.0.1:0", .tls_cert_file = "cert.pem"});
  EXPECT_EQ(half.status().code(), absl::StatusCode::kInvalidArgument) << half.status();
  auto missing = HttpServer::Start(
      {.listen = "127.0.0.1:0", .tls_cert_file = "/nonexistent.pem", .tls_key_file = "/x.key"});
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kInvalidArgument) << missing.status();
  EXPECT_NE(missing.status().message().find("/nonexistent.pem"), std::string::npos)
      << missing.status();
  auto bad = HttpServer::Start({.listen = "nowhere"});
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument) << bad.status();
  auto first = HttpServer::Start({.listen = "127.0.0.1:0"});
  ASSERT_TRUE(first.ok()) << first.status();
  auto second = HttpServer::Start({.listen = absl::StrCat("127.0.0.1:", (*first)->port())});
  EXPECT_EQ(second.status().code(), absl::StatusCode::kUnavailable) << second.status();
}

// openssl in `dir`: a CA, a server certificate for 127.0.0.1 and a client
// certificate, both signed by the CA (as tests/integration/security_test).
bool MakeCertificates(const fs::path& dir) {
  const std::string script = absl::StrCat(
      "cd ", dir.string(),
      " && exec >openssl.log 2>&1 && set -e && "
      "openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem -days 2 "
      "-subj /CN=neodb-test-ca && "
      "openssl req -newkey rsa:2048 -nodes -keyout server.key -out server.csr -subj /CN=localhost "
      "&& printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\\n' > san.ext && "
      "openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial "
      "-out server.pem -days 2 -extfile san.ext && "
      "openssl req -newkey rsa:2048 -nodes -keyout client.key -out client.csr -subj /CN=client "
      "&& openssl x509 -req -in client.csr -CA ca.pem -CAkey ca.key -CAcreateserial "
      "-out client.pem -days 2");
  return std::system(("bash -c '" + script + "'").c_str()) == 0;
}

// HTTPS with gRPC's certificate and key: off loopback too, once there are API
// keys; a plain-HTTP client gets nothing; with a client CA, a client needs its
// certificate.
TEST(HttpServerTest, ServesHttpsWithTheServersCertificate) {
  const fs::path dir = fs::temp_directory_path() / absl::StrCat("neodb_https_", getpid());
  fs::remove_all(dir);
  fs::create_directories(dir);
  ASSERT_TRUE(MakeCertificates(dir)) << "openssl failed; see " << dir / "openssl.log";
  const std::string d = dir.string() + "/";
  std::ofstream(dir / "keys") << KeyFileLine(kRead, Role::kRead, "reader") << "\n";
  auto ring = KeyRing::Open((dir / "keys").string());
  ASSERT_TRUE(ring.ok()) << ring.status();
  std::vector<std::unique_ptr<grpc::Service>> none;
  JsonRpc rpc(none, *ring);
  {
    // TLS but no keys: still refused off loopback.
    JsonRpc open(none, nullptr);
    auto no_keys = HttpServer::Start({.listen = "0.0.0.0:0",
                                      .rpc = &open,
                                      .tls_cert_file = d + "server.pem",
                                      .tls_key_file = d + "server.key"});
    EXPECT_EQ(no_keys.status().code(), absl::StatusCode::kFailedPrecondition) << no_keys.status();
    EXPECT_NE(no_keys.status().message().find("without API keys"), std::string::npos);
  }
  {
    // TLS and keys: any address (bound to all, called on loopback only).
    auto https = HttpServer::Start({.listen = "0.0.0.0:0",
                                    .rpc = &rpc,
                                    .tls_cert_file = d + "server.pem",
                                    .tls_key_file = d + "server.key"});
    ASSERT_TRUE(https.ok()) << https.status();
    EXPECT_STREQ((*https)->scheme(), "https");
    httplib::SSLClient client("127.0.0.1", (*https)->port());
    client.set_ca_cert_path((d + "ca.pem").c_str());
    client.enable_server_certificate_verification(true);
    auto health = client.Get("/healthz");
    ASSERT_TRUE(health) << httplib::to_string(health.error());
    EXPECT_EQ(health->status, 200);
    auto doc = client.Get("/openapi.json");
    ASSERT_TRUE(doc) << httplib::to_string(doc.error());
    EXPECT_EQ(doc->status, 200);
    // An unknown key over TLS: the same 401 as over plain HTTP.
    auto refused = client.Post("/v1/embeddings", {{"Authorization", "Bearer nope"}},
                               R"({"input":"x"})", "application/json");
    ASSERT_TRUE(refused);
    EXPECT_EQ(refused->status, 401) << refused->body;
    // Plain HTTP to the HTTPS port: no HTTP answer.
    httplib::Client plain("127.0.0.1", (*https)->port());
    plain.set_read_timeout(30, 0);
    auto r = plain.Get("/healthz");
    EXPECT_FALSE(r && r->status == 200);
  }
  {
    // A client CA: a client without a certificate signed by it is refused
    // in the handshake; one with it is served.
    auto mtls = HttpServer::Start({.listen = "127.0.0.1:0",
                                   .rpc = &rpc,
                                   .tls_cert_file = d + "server.pem",
                                   .tls_key_file = d + "server.key",
                                   .tls_client_ca_file = d + "ca.pem"});
    ASSERT_TRUE(mtls.ok()) << mtls.status();
    httplib::SSLClient anonymous("127.0.0.1", (*mtls)->port());
    anonymous.set_ca_cert_path((d + "ca.pem").c_str());
    anonymous.enable_server_certificate_verification(true);
    EXPECT_FALSE(anonymous.Get("/healthz"));
    httplib::SSLClient known("127.0.0.1", (*mtls)->port(), d + "client.pem", d + "client.key");
    known.set_ca_cert_path((d + "ca.pem").c_str());
    known.enable_server_certificate_verification(true);
    auto ok = known.Get("/healthz");
    ASSERT_TRUE(ok) << httplib::to_string(ok.error());
    EXPECT_EQ(ok->status, 200);
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace neodb::api
