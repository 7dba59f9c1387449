#pragma once
// What the `neodb adapt` integration tests share: a gRPC helper that makes a
// collection of random documents and checks it, and the pairs they train on.

#include <chrono>
#include <fstream>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "neodb/v1/neodb.grpc.pb.h"
#include "nlohmann/json.hpp"
#include "tests/integration/test_env.h"

namespace neodb::testing {

inline constexpr int kDocs = 300;
inline constexpr int kQueries = 40;

inline std::chrono::system_clock::time_point Deadline(int seconds = 60) {
  return std::chrono::system_clock::now() + std::chrono::seconds(seconds);
}

inline nlohmann::json ReadJsonFile(const std::string& path) {
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << path;
  return nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
}

class Admin {
 public:
  explicit Admin(ServerProcess& s)
      : cols_(v1::Collections::NewStub(s.Channel())),
        docs_(v1::Documents::NewStub(s.Channel())),
        admin_(v1::Admin::NewStub(s.Channel())) {}

  // kDocs random documents. `shape`, when given, adjusts the spec before the
  // create and the documents (all texts set) before the upsert.
  void CreateWithDocs(
      const std::string& name, std::vector<std::string>* texts,
      const std::function<void(v1::CollectionSpec*, v1::UpsertRequest*)>& shape = nullptr) {
    grpc::ClientContext ctx;
    ctx.set_deadline(Deadline());
    v1::CreateCollectionRequest req;
    req.mutable_spec()->set_name(name);
    // Not the default fusion, so a rollback that forgot it would show.
    req.mutable_spec()->set_fusion("weighted");
    req.mutable_spec()->set_fusion_alpha(0.9);
    v1::UpsertRequest u;
    if (shape) shape(req.mutable_spec(), nullptr);
    v1::CreateCollectionResponse resp;
    grpc::Status s = cols_->Create(&ctx, req, &resp);
    ASSERT_TRUE(s.ok()) << s.error_message();
    std::mt19937_64 rng(7);
    u.set_collection(name);
    for (int i = 0; i < kDocs; ++i) {
      auto* d = u.add_documents();
      d->set_id(absl::StrCat("d", i));
      d->set_text(RandomText(rng, 12));
      texts->push_back(d->text());
    }
    if (shape) shape(nullptr, &u);
    grpc::ClientContext c2;
    c2.set_deadline(Deadline(300));
    v1::UpsertResponse ur;
    s = docs_->Upsert(&c2, u, &ur);
    ASSERT_TRUE(s.ok()) << s.error_message();
  }
  v1::CollectionInfo Describe(const std::string& name) {
    grpc::ClientContext ctx;
    ctx.set_deadline(Deadline());
    v1::DescribeCollectionRequest req;
    req.set_name(name);
    v1::DescribeCollectionResponse resp;
    grpc::Status s = cols_->Describe(&ctx, req, &resp);
    EXPECT_TRUE(s.ok()) << s.error_message();
    return resp.info();
  }
  v1::ReindexStatusResponse Status(const std::string& c) {
    grpc::ClientContext ctx;
    ctx.set_deadline(Deadline());
    v1::ReindexStatusRequest req;
    req.set_collection(c);
    v1::ReindexStatusResponse r;
    admin_->ReindexStatus(&ctx, req, &r);
    return r;
  }
  // Wholly on `model_id`: every stored document indexed, none from another model.
  void ExpectWhole(const std::string& c, const std::string& model_id) {
    grpc::ClientContext ctx;
    ctx.set_deadline(Deadline());
    v1::VerifyRequest req;
    req.set_collection(c);
    v1::VerifyResponse v;
    grpc::Status s = admin_->Verify(&ctx, req, &v);
    ASSERT_TRUE(s.ok()) << s.error_message();
    EXPECT_EQ(v.model_id(), model_id);
    EXPECT_EQ(v.foreign_model(), 0u);
    EXPECT_EQ(v.stored(), static_cast<uint64_t>(kDocs));
    EXPECT_EQ(v.indexed(), static_cast<uint64_t>(kDocs));
    EXPECT_EQ(v.missing_from_index(), 0u);
    EXPECT_EQ(v.stale_in_index(), 0u);
  }

 private:
  std::unique_ptr<v1::Collections::Stub> cols_;
  std::unique_ptr<v1::Documents::Stub> docs_;
  std::unique_ptr<v1::Admin::Stub> admin_;
};

// kQueries pairs: a query is the first four words of a document, whose id is
// its positive.
inline void WritePrefixPairs(const std::vector<std::string>& texts, const std::string& path) {
  std::ofstream p(path);
  for (int i = 0; i < kQueries; ++i) {
    const std::string& t = texts[i * 7];
    size_t cut = 0;
    for (int w = 0; w < 4; ++w) cut = t.find(' ', cut + 1);
    p << nlohmann::json{{"query", t.substr(0, cut)}, {"positive_id", absl::StrCat("d", i * 7)}}
             .dump()
      << "\n";
  }
}

}  // namespace neodb::testing
