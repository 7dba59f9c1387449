// Tenants end to end (README, Tenants): a multi-tenant collection holding
// tenants "acme" and "globex", both with documents "d0".."d29" whose texts
// name their tenant. Acting as acme, the test tries to reach globex's
// documents through every call — search in every mode, near-vector with a
// globex vector, recommend, batch, get, list, count, delete and update by
// ids and by filter, upsert over the same ids, ids that spell globex's
// stored ids — and never can: every answer holds acme's documents only,
// under acme's own ids, and globex's documents are unchanged after all of
// it (and after a restart). Deleting tenant acme leaves globex whole.
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "neodb/v1/neodb.grpc.pb.h"
#include "tests/integration/test_env.h"

namespace neodb::testing {
namespace {

constexpr int kDocs = 30;

std::chrono::system_clock::time_point Deadline() {
  return std::chrono::system_clock::now() + std::chrono::seconds(60);
}

std::vector<std::string> Args(const TestDir& dir) {
  std::filesystem::create_directories(dir.Sub("fake:1"));
  return {"--data-dir", dir.Sub("data"), "--fake-model", "16", "--model", dir.Sub("fake:1")};
}

class Client {
 public:
  explicit Client(ServerProcess& s)
      : cols_(v1::Collections::NewStub(s.Channel())),
        docs_(v1::Documents::NewStub(s.Channel())),
        search_(v1::Search::NewStub(s.Channel())) {}

  template <typename Stub, typename Req, typename Resp>
  grpc::Status Call(Stub& stub,
                    grpc::Status (Stub::*m)(grpc::ClientContext*, const Req&, Resp*),
                    const Req& req, Resp* resp) {
    grpc::ClientContext ctx;
    ctx.set_deadline(Deadline());
    return (stub.*m)(&ctx, req, resp);
  }

  std::unique_ptr<v1::Collections::Stub> cols_;
  std::unique_ptr<v1::Documents::Stub> docs_;
  std::unique_ptr<v1::Search::Stub> search_;
};

void Upsert(Client& c, const std::string& tenant, int from, int to, const std::string& word) {
  v1::UpsertRequest req;
  req.set_collection("mt");
  req.set_tenant(tenant);
  for (int i = from; i < to; ++i) {
    v1::Document* d = req.add_documents();
    d->set_id(absl::StrCat("d", i));
    d->set_text(absl::StrCat(word, " report number ", i, " about shared topics"));
    (*d->mutable_metadata())["owner"].set_string_value(tenant);
    (*d->mutable_metadata())["n"].set_int_value(i);
  }
  v1::UpsertResponse resp;
  grpc::Status st = c.Call(*c.docs_, &v1::Documents::Stub::Upsert, req, &resp);
  ASSERT_TRUE(st.ok()) << st.error_message();
  ASSERT_EQ(resp.ids_size(), to - from);
  for (int i = from; i < to; ++i) EXPECT_EQ(resp.ids(i - from), absl::StrCat("d", i));
}

// globex's documents as the test wrote them: ids, texts, metadata.
void ExpectGlobexWhole(Client& c) {
  v1::ListDocumentsRequest req;
  req.set_collection("mt");
  req.set_tenant("globex");
  req.set_page_size(1000);
  req.set_include_text(true);
  req.set_include_metadata(true);
  v1::ListDocumentsResponse resp;
  grpc::Status st = c.Call(*c.docs_, &v1::Documents::Stub::List, req, &resp);
  ASSERT_TRUE(st.ok()) << st.error_message();
  ASSERT_EQ(resp.documents_size(), kDocs);
  for (const v1::Document& d : resp.documents()) {
    EXPECT_TRUE(d.text().starts_with("globex report number")) << d.id() << ": " << d.text();
    EXPECT_EQ(d.metadata().at("owner").string_value(), "globex");
    EXPECT_FALSE(d.metadata().contains("touched")) << d.id();
  }
}

// Every hit is one of acme's, under acme's own id.
void ExpectAcmeHits(const v1::SearchResponse& r, const std::string& what) {
  for (const v1::Hit& h : r.hits()) {
    EXPECT_TRUE(h.text().starts_with("acme ")) << what << ": " << h.id() << " " << h.text();
    EXPECT_EQ(h.id().find('/'), std::string::npos) << what << ": " << h.id();
  }
}

TEST(TenantIsolationTest, ATenantNeverReachesAnotherTenantsDocuments) {
  TestDir dir("tenant_isolation");
  ServerProcess server(Args(dir));
  ASSERT_TRUE(server.Start());
  Client c(server);
  {
    v1::CreateCollectionRequest req;
    req.mutable_spec()->set_name("mt");
    req.mutable_spec()->mutable_index()->set_type("hnsw");
    req.mutable_spec()->set_multi_tenant(true);
    v1::CreateCollectionResponse resp;
    grpc::Status st = c.Call(*c.cols_, &v1::Collections::Stub::Create, req, &resp);
    ASSERT_TRUE(st.ok()) << st.error_message();
    EXPECT_TRUE(resp.info().spec().multi_tenant());
  }
  Upsert(c, "globex", 0, kDocs, "globex");
  Upsert(c, "acme", 0, kDocs, "acme");
  ExpectGlobexWhole(c);

  // A globex vector, to search acme with.
  std::vector<float> globex_vector;
  {
    v1::GetRequest req;
    req.set_collection("mt");
    req.set_tenant("globex");
    req.add_ids("d3");
    req.set_include_vector(true);
    v1::GetResponse resp;
    ASSERT_TRUE(c.Call(*c.docs_, &v1::Documents::Stub::Get, req, &resp).ok());
    ASSERT_EQ(resp.documents_size(), 1);
    globex_vector.assign(resp.documents(0).vector().begin(), resp.documents(0).vector().end());
  }

  // Search in every mode, with globex's own word.
  for (const std::string mode : {"vector", "keyword", "hybrid"}) {
    v1::NearTextRequest req;
    req.set_collection("mt");
    req.set_tenant("acme");
    req.set_query("globex report");
    req.set_mode(mode);
    req.set_k(100);
    req.set_include_text(true);
    v1::SearchResponse resp;
    grpc::Status st = c.Call(*c.search_, &v1::Search::Stub::NearText, req, &resp);
    ASSERT_TRUE(st.ok()) << mode << ": " << st.error_message();
    if (mode != "keyword") EXPECT_EQ(resp.hits_size(), kDocs) << mode;
    ExpectAcmeHits(resp, mode);
  }
  {
    v1::NearVectorRequest req;
    req.set_collection("mt");
    req.set_tenant("acme");
    req.mutable_vector()->Add(globex_vector.begin(), globex_vector.end());
    req.set_k(100);
    req.set_include_text(true);
    v1::SearchResponse resp;
    ASSERT_TRUE(c.Call(*c.search_, &v1::Search::Stub::NearVector, req, &resp).ok());
    EXPECT_EQ(resp.hits_size(), kDocs);
    ExpectAcmeHits(resp, "near-vector");
  }
  {
    v1::RecommendRequest req;
    req.set_collection("mt");
    req.set_tenant("acme");
    req.add_positive_ids("d1");
    req.set_k(100);
    req.set_include_text(true);
    v1::SearchResponse resp;
    ASSERT_TRUE(c.Call(*c.search_, &v1::Search::Stub::Recommend, req, &resp).ok());
    EXPECT_EQ(resp.hits_size(), kDocs - 1);
    ExpectAcmeHits(resp, "recommend");
    // globex's stored id spelled out is just an id acme does not have.
    req.set_positive_ids(0, "globex/d1");
    grpc::Status st = c.Call(*c.search_, &v1::Search::Stub::Recommend, req, &resp);
    EXPECT_EQ(st.error_code(), grpc::StatusCode::NOT_FOUND) << st.error_message();
  }
  {
    v1::BatchNearTextRequest req;
    req.set_collection("mt");
    req.set_tenant("acme");
    for (const std::string mode : {"vector", "keyword"}) {
      v1::NearTextRequest* q = req.add_queries();
      q->set_query("globex");
      q->set_mode(mode);
      q->set_k(100);
      q->set_include_text(true);
    }
    req.add_queries()->set_tenant("globex");  // a query may not name another tenant
    req.mutable_queries(2)->set_query("globex");
    v1::BatchSearchResponse resp;
    ASSERT_TRUE(c.Call(*c.search_, &v1::Search::Stub::BatchNearText, req, &resp).ok());
    ASSERT_EQ(resp.results_size(), 3);
    for (int i = 0; i < 2; ++i) {
      EXPECT_EQ(resp.results(i).code(), 0) << resp.results(i).message();
      ExpectAcmeHits(resp.results(i).response(), "batch");
    }
    EXPECT_EQ(resp.results(2).code(), static_cast<int>(grpc::StatusCode::INVALID_ARGUMENT));
  }

  // Get and list: acme's own ids; globex's stored ids are not acme's.
  {
    v1::GetRequest req;
    req.set_collection("mt");
    req.set_tenant("acme");
    for (const char* id : {"d1", "globex/d1", "../globex/d1", "/d1"}) req.add_ids(id);
    v1::GetResponse resp;
    ASSERT_TRUE(c.Call(*c.docs_, &v1::Documents::Stub::Get, req, &resp).ok());
    ASSERT_EQ(resp.documents_size(), 1);
    EXPECT_EQ(resp.documents(0).id(), "d1");
    EXPECT_TRUE(resp.documents(0).text().starts_with("acme "));
    EXPECT_EQ(resp.missing_ids_size(), 3);
  }
  {
    std::set<std::string> ids;
    std::string token;
    do {
      v1::ListDocumentsRequest req;
      req.set_collection("mt");
      req.set_tenant("acme");
      req.set_page_size(7);
      req.set_page_token(token);
      req.set_include_text(true);
      v1::ListDocumentsResponse resp;
      ASSERT_TRUE(c.Call(*c.docs_, &v1::Documents::Stub::List, req, &resp).ok());
      for (const v1::Document& d : resp.documents()) {
        EXPECT_TRUE(d.text().starts_with("acme ")) << d.id();
        ids.insert(d.id());
      }
      token = resp.next_page_token();
    } while (!token.empty());
    EXPECT_EQ(ids.size(), static_cast<size_t>(kDocs));
    EXPECT_TRUE(ids.contains("d0"));
  }
  auto count = [&](const std::string& tenant, const std::string& filter) {
    v1::CountRequest req;
    req.set_collection("mt");
    req.set_tenant(tenant);
    req.set_filter_json(filter);
    v1::CountResponse resp;
    grpc::Status st = c.Call(*c.docs_, &v1::Documents::Stub::Count, req, &resp);
    EXPECT_TRUE(st.ok()) << st.error_message();
    return resp.count();
  };
  EXPECT_EQ(count("acme", ""), static_cast<uint64_t>(kDocs));
  EXPECT_EQ(count("acme", R"({"field":"owner","eq":"globex"})"), 0u);

  // Writes: update and delete by filter and by ids, and an upsert over the
  // same ids, all as acme.
  {
    v1::UpdateMetadataRequest req;
    req.set_collection("mt");
    req.set_tenant("acme");
    req.set_filter_json(R"({"field":"n","gte":0})");
    (*req.mutable_metadata())["touched"].set_bool_value(true);
    v1::UpdateMetadataResponse resp;
    ASSERT_TRUE(c.Call(*c.docs_, &v1::Documents::Stub::UpdateMetadata, req, &resp).ok());
    EXPECT_EQ(resp.updated(), static_cast<uint64_t>(kDocs));
    req.clear_filter_json();
    req.add_ids("globex/d2");
    ASSERT_TRUE(c.Call(*c.docs_, &v1::Documents::Stub::UpdateMetadata, req, &resp).ok());
    EXPECT_EQ(resp.matched(), 0u);
    ASSERT_EQ(resp.missing_ids_size(), 1);
    EXPECT_EQ(resp.missing_ids(0), "globex/d2");
  }
  {
    v1::DeleteRequest req;
    req.set_collection("mt");
    req.set_tenant("acme");
    req.add_ids("d2");
    req.add_ids("globex/d3");
    v1::DeleteResponse resp;
    ASSERT_TRUE(c.Call(*c.docs_, &v1::Documents::Stub::Delete, req, &resp).ok());
    EXPECT_EQ(resp.deleted(), 1u);
    req.clear_ids();
    req.set_filter_json(R"({"field":"n","lt":5})");
    ASSERT_TRUE(c.Call(*c.docs_, &v1::Documents::Stub::Delete, req, &resp).ok());
    EXPECT_EQ(resp.deleted(), 4u);  // d0, d1, d3, d4 (d2 is gone)
  }
  Upsert(c, "acme", 0, 5, "acme");  // the same ids again, acme's
  ExpectGlobexWhole(c);

  // Without a tenant, or with one on an ordinary collection: refused.
  {
    v1::CountRequest req;
    req.set_collection("mt");
    v1::CountResponse resp;
    EXPECT_EQ(c.Call(*c.docs_, &v1::Documents::Stub::Count, req, &resp).error_code(),
              grpc::StatusCode::INVALID_ARGUMENT);
    v1::NearTextRequest nt;
    nt.set_collection("mt");
    nt.set_query("globex");
    v1::SearchResponse sr;
    EXPECT_EQ(c.Call(*c.search_, &v1::Search::Stub::NearText, nt, &sr).error_code(),
              grpc::StatusCode::INVALID_ARGUMENT);
    v1::UpsertRequest up;
    up.set_collection("mt");
    up.add_documents()->set_text("whose?");
    v1::UpsertResponse ur;
    EXPECT_EQ(c.Call(*c.docs_, &v1::Documents::Stub::Upsert, up, &ur).error_code(),
              grpc::StatusCode::INVALID_ARGUMENT);
    // With a tenant, an id-less document gets an id of the tenant's own.
    up.set_tenant("acme");
    ASSERT_TRUE(c.Call(*c.docs_, &v1::Documents::Stub::Upsert, up, &ur).ok());
    ASSERT_EQ(ur.ids_size(), 1);
    EXPECT_EQ(ur.ids(0).find('/'), std::string::npos) << ur.ids(0);
    v1::DeleteRequest all;
    all.set_collection("mt");
    all.set_tenant("acme");
    all.set_all_of_tenant(true);
    all.add_ids("d1");
    v1::DeleteResponse dr;
    EXPECT_EQ(c.Call(*c.docs_, &v1::Documents::Stub::Delete, all, &dr).error_code(),
              grpc::StatusCode::INVALID_ARGUMENT);
  }
  {
    v1::ListTenantsRequest req;
    req.set_collection("mt");
    v1::ListTenantsResponse resp;
    ASSERT_TRUE(c.Call(*c.docs_, &v1::Documents::Stub::ListTenants, req, &resp).ok());
    ASSERT_EQ(resp.tenants_size(), 2);
    EXPECT_EQ(resp.tenants(0).tenant(), "acme");
    EXPECT_EQ(resp.tenants(0).documents(), static_cast<uint64_t>(kDocs + 1));
    EXPECT_EQ(resp.tenants(1).tenant(), "globex");
    EXPECT_EQ(resp.tenants(1).documents(), static_cast<uint64_t>(kDocs));
  }
  // Deleting tenant acme.
  {
    v1::DeleteRequest req;
    req.set_collection("mt");
    req.set_tenant("acme");
    req.set_all_of_tenant(true);
    v1::DeleteResponse resp;
    ASSERT_TRUE(c.Call(*c.docs_, &v1::Documents::Stub::Delete, req, &resp).ok());
    EXPECT_EQ(resp.deleted(), static_cast<uint64_t>(kDocs + 1));
  }
  EXPECT_EQ(count("acme", ""), 0u);
  EXPECT_EQ(count("globex", ""), static_cast<uint64_t>(kDocs));
  ExpectGlobexWhole(c);

  // After a restart (the tenants' ids rebuilt from the store).
  server.Kill();
  ServerProcess again(Args(dir));
  ASSERT_TRUE(again.Start());
  Client c2(again);
  ExpectGlobexWhole(c2);
  v1::CountRequest req;
  req.set_collection("mt");
  req.set_tenant("acme");
  v1::CountResponse resp;
  ASSERT_TRUE(c2.Call(*c2.docs_, &v1::Documents::Stub::Count, req, &resp).ok());
  EXPECT_EQ(resp.count(), 0u);
}

}  // namespace
}  // namespace neodb::testing
