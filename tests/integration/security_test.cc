// The server an operator exposes: API keys and roles, TLS and mutual TLS, the
// non-loopback rule and the models directory, end to end through
// `neodb serve`. Keys are made with `neodb keys add`, certificates with the
// openssl command.
#include <signal.h>

#include <filesystem>
#include <future>
#include <map>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "google/protobuf/descriptor.h"
#include "grpcpp/generic/generic_stub.h"
#include "gtest/gtest.h"
#include "neodb/v1/neodb.grpc.pb.h"
#include "nlohmann/json.hpp"
#include "tests/integration/test_env.h"
#include "tests/integration/tls_test_util.h"

namespace neodb::testing {
namespace {

using grpc::StatusCode;

std::chrono::system_clock::time_point Deadline(int seconds = 30) {
  return std::chrono::system_clock::now() + std::chrono::seconds(seconds);
}

// `neodb keys add`: returns the printed key.
std::string AddKey(const TestDir& dir, const std::string& role, const std::string& file) {
  CommandResult r =
      RunNeodbCapture(absl::StrCat("keys add --role ", role, " --key-file ", file), dir.Sub(""));
  EXPECT_EQ(r.status, 0) << r.err;
  return std::string(absl::StripAsciiWhitespace(r.out));
}

// Calls `method` with an empty request (its bytes are a valid empty message
// of every type) and returns the status. Streaming methods get one message
// and a half-close, which is all the auth check looks at.
grpc::Status CallEmpty(const std::shared_ptr<grpc::Channel>& ch, const std::string& method,
                       const std::string& key) {
  grpc::GenericStub stub(ch);
  grpc::ClientContext ctx;
  ctx.set_deadline(Deadline());
  if (!key.empty()) ctx.AddMetadata("authorization", "Bearer " + key);
  grpc::Slice empty("", 0);
  grpc::ByteBuffer req(&empty, 1), resp;
  std::promise<grpc::Status> done;
  stub.UnaryCall(&ctx, method, grpc::StubOptions(), &req, &resp,
                 [&](grpc::Status s) { done.set_value(std::move(s)); });
  return done.get_future().get();
}

// Every method of neodb.v1, as the descriptor pool knows them.
std::set<std::string> AllMethods() {
  std::set<std::string> out;
  const auto* file = v1::StatsRequest::descriptor()->file();
  for (int i = 0; i < file->service_count(); ++i) {
    const auto* svc = file->service(i);
    for (int j = 0; j < svc->method_count(); ++j) {
      out.insert(absl::StrCat("/", svc->full_name(), "/", svc->method(j)->name()));
    }
  }
  return out;
}

// The role each method needs: this test's own statement of the policy.
const std::map<std::string, std::string>& ExpectedRoles() {
  static const auto* m = new std::map<std::string, std::string>{
      {"/neodb.v1.Collections/Create", "admin"},    {"/neodb.v1.Collections/List", "read"},
      {"/neodb.v1.Collections/Describe", "read"},   {"/neodb.v1.Collections/Drop", "admin"},
      {"/neodb.v1.Documents/Upsert", "write"},      {"/neodb.v1.Documents/BulkIngest", "write"},
      {"/neodb.v1.Documents/Ingest", "write"},      {"/neodb.v1.Documents/Get", "read"},
      {"/neodb.v1.Documents/Delete", "write"},      {"/neodb.v1.Documents/List", "read"},
      {"/neodb.v1.Search/NearText", "read"},        {"/neodb.v1.Search/NearVector", "read"},
      {"/neodb.v1.Embedding/Embed", "read"},        {"/neodb.v1.Admin/Stats", "read"},
      {"/neodb.v1.Admin/Snapshot", "admin"},        {"/neodb.v1.Admin/Reindex", "admin"},
      {"/neodb.v1.Admin/ReindexStatus", "read"},    {"/neodb.v1.Admin/Compact", "admin"},
      {"/neodb.v1.Admin/Verify", "admin"},          {"/neodb.v1.Admin/Backup", "admin"},
      {"/neodb.v1.Collections/SetFusion", "admin"},
      {"/neodb.v1.Admin/ClusterStatus", "read"},
      {"/neodb.v1.Search/KeywordStats", "read"},
      {"/neodb.v1.Search/Recommend", "read"},
      {"/neodb.v1.Search/BatchNearText", "read"},
      {"/neodb.v1.Admin/ClusterRebalance", "admin"},
      {"/neodb.v1.Admin/ClusterBackup", "admin"},
      {"/neodb.v1.Admin/ClusterRestore", "admin"},
      {"/neodb.v1.Documents/Count", "read"},
      {"/neodb.v1.Documents/UpdateMetadata", "write"},
      {"/neodb.v1.Documents/ListTenants", "admin"},
  };
  return *m;
}

int Rank(const std::string& role) { return role == "read" ? 1 : role == "write" ? 2 : 3; }

TEST(SecurityTest, EveryRoleAgainstEveryMethod) {
  TestDir dir("sec_roles");
  const std::string keys = dir.Sub("keys");
  std::map<std::string, std::string> key_of;
  for (const char* role : {"read", "write", "admin"}) key_of[role] = AddKey(dir, role, keys);
  ServerProcess server([&] {
    std::vector<std::string> a = {"--data-dir", dir.Sub("data"), "--key-file", keys};
    for (auto& x : ModelArgs(dir, 1)) a.push_back(x);
    return a;
  }());
  ASSERT_TRUE(server.Start());
  auto ch = server.Channel();

  // The table covers every method the API has: a new RPC must be placed.
  std::set<std::string> tabled;
  for (const auto& [m, r] : ExpectedRoles()) tabled.insert(m);
  ASSERT_EQ(tabled, AllMethods());

  for (const auto& [method, needs] : ExpectedRoles()) {
    SCOPED_TRACE(method);
    EXPECT_EQ(CallEmpty(ch, method, "").error_code(), StatusCode::UNAUTHENTICATED);
    EXPECT_EQ(CallEmpty(ch, method, "neodb_not_a_key").error_code(), StatusCode::UNAUTHENTICATED);
    for (const auto& [role, key] : key_of) {
      SCOPED_TRACE(role);
      grpc::Status s = CallEmpty(ch, method, key);
      if (Rank(role) < Rank(needs)) {
        EXPECT_EQ(s.error_code(), StatusCode::PERMISSION_DENIED) << s.error_message();
      } else {
        // Past the check: whatever the empty request earns, not an auth error.
        EXPECT_NE(s.error_code(), StatusCode::PERMISSION_DENIED) << s.error_message();
        EXPECT_NE(s.error_code(), StatusCode::UNAUTHENTICATED) << s.error_message();
      }
    }
  }
  // Health stays open.
  grpc::Status h = CallEmpty(ch, "/grpc.health.v1.Health/Check", "");
  EXPECT_TRUE(h.ok()) << h.error_message();

  // A read key really reads and a write key really writes, through the CLI.
  const std::string at = absl::StrCat(" --server ", server.address());
  CommandResult r = RunNeodbCapture(
      absl::StrCat("collections create c --api-key ", key_of["admin"], at), dir.Sub(""));
  EXPECT_EQ(r.status, 0) << r.err;
  r = RunNeodbCapture(absl::StrCat("collections create d --api-key ", key_of["write"], at),
                      dir.Sub(""));
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find("needs admin"), std::string::npos) << r.err;
  setenv("NEODB_API_KEY", key_of["read"].c_str(), 1);
  r = RunNeodbCapture(absl::StrCat("collections list", at), dir.Sub(""));
  unsetenv("NEODB_API_KEY");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("\"c\""), std::string::npos) << r.out;
  // `models list` and `adapt` open the same channel and send the same key.
  r = RunNeodbCapture(absl::StrCat("models list", at), dir.Sub(""));
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find("API key"), std::string::npos) << r.err;
  r = RunNeodbCapture(absl::StrCat("models list --api-key ", key_of["read"], at), dir.Sub(""));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("\"c\""), std::string::npos) << r.out;
  r = RunNeodbCapture(absl::StrCat("adapt --rollback c --api-key ", key_of["admin"], at),
                      dir.Sub(""));
  EXPECT_NE(r.status, 0);  // past the key: there is nothing to roll back to
  EXPECT_NE(r.err.find("nothing to roll back to"), std::string::npos) << r.err;

  // SIGHUP loads a key added while the server runs.
  const std::string late = AddKey(dir, "read", keys);
  EXPECT_EQ(CallEmpty(ch, "/neodb.v1.Admin/Stats", late).error_code(), StatusCode::UNAUTHENTICATED);
  server.Notify(SIGHUP);
  grpc::Status s;
  for (int i = 0; i < 1500; ++i) {  // bounded: 30 s
    s = CallEmpty(ch, "/neodb.v1.Admin/Stats", late);
    if (s.ok()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(server.Stop(), 0);
}

TEST(SecurityTest, KeysAddRefusesToExtendABrokenKeyFile) {
  TestDir dir("sec_keysadd");
  { std::ofstream(dir.Sub("keys")) << "sha256:xyz admin someone\n"; }
  CommandResult r = RunNeodbCapture(
      absl::StrCat("keys add --role read --key-file ", dir.Sub("keys")), dir.Sub(""));
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find(":1:"), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty());
}

TEST(SecurityTest, NonLoopbackNeedsTlsAndKeysOrInsecure) {
  TestDir dir("sec_bind");
  std::string model;
  for (auto& x : ModelArgs(dir, 1)) model += " " + x;
  CommandResult r = RunNeodbCapture(absl::StrCat("serve --data-dir ", dir.Sub("data"), model,
                                                 " --listen 0.0.0.0:0 --log-format json"),
                                    dir.Sub(""));
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find("refusing to listen on 0.0.0.0:0 without TLS and without API keys"),
            std::string::npos)
      << r.err;
  // --log-format json: every log line is a JSON object (the final error line
  // is the CLI's own "neodb: ..." message).
  int json_lines = 0;
  for (absl::string_view line : absl::StrSplit(r.err, '\n', absl::SkipEmpty())) {
    if (absl::StartsWith(line, "neodb: ")) continue;
    auto j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    ASSERT_TRUE(j.is_object()) << line;
    EXPECT_TRUE(j["time"].is_string() && j["level"].is_string() && j["msg"].is_string()) << line;
    ++json_lines;
  }
  EXPECT_GE(json_lines, 1) << r.err;
  // With keys but no TLS: still refused (keys would travel in clear).
  const std::string keys = dir.Sub("keys");
  AddKey(dir, "admin", keys);
  r = RunNeodbCapture(absl::StrCat("serve --data-dir ", dir.Sub("data"), model,
                                   " --listen 0.0.0.0:0 --key-file ", keys),
                      dir.Sub(""));
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find("without TLS"), std::string::npos) << r.err;

  // --insecure: it starts, and says so in its log.
  std::vector<std::string> a = {"--data-dir", dir.Sub("data"), "--insecure"};
  for (auto& x : ModelArgs(dir, 1)) a.push_back(x);
  ServerProcess server(a, "0.0.0.0:0");
  ASSERT_TRUE(server.Start());
  grpc::Status s = CallEmpty(server.Channel(), "/neodb.v1.Admin/Stats", "");
  EXPECT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(server.Stop(), 0);
}

TEST(SecurityTest, TlsAndMutualTls) {
  TestDir dir("sec_tls");
  MakeCertificates(dir);
  const std::string keys = dir.Sub("keys");
  const std::string key = AddKey(dir, "read", keys);
  std::vector<std::string> base = {"--data-dir", dir.Sub("data"),      "--key-file",
                                   keys,         "--tls-cert",         dir.Sub("server.pem"),
                                   "--tls-key",  dir.Sub("server.key")};
  for (auto& x : ModelArgs(dir, 1)) base.push_back(x);
  {
    ServerProcess server(base);
    ASSERT_TRUE(server.Start());
    EXPECT_TRUE(
        CallEmpty(TlsChannel(dir, server.port(), false), "/neodb.v1.Admin/Stats", key).ok());
    // Keys are checked over TLS too.
    EXPECT_EQ(
        CallEmpty(TlsChannel(dir, server.port(), false), "/neodb.v1.Admin/Stats", "").error_code(),
        StatusCode::UNAUTHENTICATED);
    // A plaintext client gets no answer.
    EXPECT_EQ(CallEmpty(server.Channel(), "/neodb.v1.Admin/Stats", key).error_code(),
              StatusCode::UNAVAILABLE);
    // The CLI with --tls-ca.
    CommandResult r =
        RunNeodbCapture(absl::StrCat("stats --json --server 127.0.0.1:", server.port(),
                                     " --tls-ca ", dir.Sub("ca.pem"), " --api-key ", key),
                        dir.Sub(""));
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.out.find("\"collections\""), std::string::npos) << r.out;
    r = RunNeodbCapture(absl::StrCat("models list --server 127.0.0.1:", server.port(), " --tls-ca ",
                                     dir.Sub("ca.pem"), " --api-key ", key),
                        dir.Sub(""));
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.out.find("\"default\":true"), std::string::npos) << r.out;
    EXPECT_EQ(server.Stop(), 0);
  }
  {
    std::vector<std::string> a = base;
    a.push_back("--tls-client-ca");
    a.push_back(dir.Sub("ca.pem"));
    ServerProcess server(a);
    ASSERT_TRUE(server.Start());
    EXPECT_TRUE(CallEmpty(TlsChannel(dir, server.port(), true), "/neodb.v1.Admin/Stats", key).ok());
    // No client certificate: the handshake fails.
    EXPECT_EQ(
        CallEmpty(TlsChannel(dir, server.port(), false), "/neodb.v1.Admin/Stats", key).error_code(),
        StatusCode::UNAVAILABLE);
    CommandResult r =
        RunNeodbCapture(absl::StrCat("stats --server 127.0.0.1:", server.port(), " --tls-ca ",
                                     dir.Sub("ca.pem"), " --tls-cert ", dir.Sub("client.pem"),
                                     " --tls-key ", dir.Sub("client.key"), " --api-key ", key),
                        dir.Sub(""));
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(server.Stop(), 0);
  }
}

grpc::Status Reindex(const std::shared_ptr<grpc::Channel>& ch, const std::string& model_dir,
                     bool dry_run = false) {
  auto admin = v1::Admin::NewStub(ch);
  grpc::ClientContext ctx;
  ctx.set_deadline(Deadline());
  v1::ReindexRequest req;
  req.set_collection("c");
  req.set_model_dir(model_dir);
  req.set_dry_run(dry_run);
  v1::ReindexResponse resp;
  return admin->Reindex(&ctx, req, &resp);
}

TEST(SecurityTest, ModelPathsAreConfinedToTheModelsDir) {
  TestDir dir("sec_models");
  namespace fs = std::filesystem;
  // A model inside models/ and one beside it (outside).
  const std::string outside = ModelDir(dir, 2);
  fs::create_directories(dir.Sub("models"));
  fs::copy(outside, dir.Sub("models/m2"), fs::copy_options::recursive);
  fs::create_directory_symlink(outside, dir.Sub("models/link_out"));
  std::vector<std::string> a = {"--data-dir", dir.Sub("data")};
  for (auto& x : ModelArgs(dir, 1)) a.push_back(x);
  // ModelArgs names dir as --models-dir; this server gets models/ instead.
  for (size_t i = 0; i + 1 < a.size(); ++i) {
    if (a[i] == "--models-dir") a[i + 1] = dir.Sub("models");
  }
  {
    ServerProcess server(a);
    ASSERT_TRUE(server.Start());
    auto ch = server.Channel();
    auto coll = v1::Collections::NewStub(ch);
    grpc::ClientContext ctx;
    ctx.set_deadline(Deadline());
    v1::CreateCollectionRequest creq;
    creq.mutable_spec()->set_name("c");
    v1::CreateCollectionResponse cresp;
    ASSERT_TRUE(coll->Create(&ctx, creq, &cresp).ok());

    for (const std::string& bad :
         {outside, dir.Sub("models/../" + fs::path(outside).filename().string()),
          std::string("../") + fs::path(outside).filename().string(), dir.Sub("models/link_out"),
          std::string("/etc")}) {
      SCOPED_TRACE(bad);
      grpc::Status s = Reindex(ch, bad);
      EXPECT_EQ(s.error_code(), StatusCode::PERMISSION_DENIED) << s.error_message();
    }
    grpc::Status missing = Reindex(ch, "nope");
    EXPECT_EQ(missing.error_code(), StatusCode::NOT_FOUND) << missing.error_message();
    // Inside, by relative and absolute name: accepted.
    grpc::Status ok = Reindex(ch, "m2");
    EXPECT_TRUE(ok.ok()) << ok.error_message();
    EXPECT_EQ(server.Stop(), 0);
  }
  // No --models-dir: API-given model paths are refused outright.
  std::vector<std::string> b;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i] == "--models-dir") {
      ++i;
      continue;
    }
    b.push_back(a[i]);
  }
  ServerProcess server(b);
  ASSERT_TRUE(server.Start());
  grpc::Status s = Reindex(server.Channel(), outside);
  EXPECT_EQ(s.error_code(), StatusCode::PERMISSION_DENIED) << s.error_message();
  EXPECT_NE(s.error_message().find("--models-dir"), std::string::npos);
  // Except the models the server chose itself, not a client: c's current
  // model (models/m2, since the reindex above) and the server's default,
  // which c was on before (a rollback). Asked as dry runs, which check the
  // path as the reindex does and start nothing.
  for (const std::string& own : {dir.Sub("models/m2"), ModelDir(dir, 1)}) {
    s = Reindex(server.Channel(), own, /*dry_run=*/true);
    EXPECT_TRUE(s.ok()) << own << ": " << s.error_message();
  }
  s = Reindex(server.Channel(), outside, /*dry_run=*/true);
  EXPECT_EQ(s.error_code(), StatusCode::PERMISSION_DENIED) << s.error_message();
  s = Reindex(server.Channel(), ModelDir(dir, 1));
  EXPECT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(server.Stop(), 0);
}

}  // namespace
}  // namespace neodb::testing
