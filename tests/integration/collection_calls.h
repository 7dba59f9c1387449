#pragma once
// The calls integration tests make to look at a whole collection on a
// running server: Admin.Verify, and every document through Documents.List
// page by page. Failures are gtest failures at the caller's line.

#include <chrono>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "neodb/v1/neodb.grpc.pb.h"
#include "tests/integration/server_process.h"

namespace neodb::testing {

inline v1::VerifyResponse VerifyCollection(ServerProcess& s, const std::string& collection) {
  auto admin = v1::Admin::NewStub(s.Channel());
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
  v1::VerifyRequest req;
  req.set_collection(collection);
  v1::VerifyResponse r;
  grpc::Status st = admin->Verify(&ctx, req, &r);
  EXPECT_TRUE(st.ok()) << st.error_message();
  return r;
}

// Every document in List's order (ids ascending); `full`: with text,
// metadata and vector.
inline std::vector<v1::Document> ListAllDocuments(ServerProcess& s, const std::string& collection,
                                                  bool full = false) {
  auto docs = v1::Documents::NewStub(s.Channel());
  std::vector<v1::Document> out;
  std::string token;
  do {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
    v1::ListDocumentsRequest req;
    req.set_collection(collection);
    req.set_page_size(1000);
    req.set_page_token(token);
    req.set_include_text(full);
    req.set_include_metadata(full);
    req.set_include_vector(full);
    v1::ListDocumentsResponse resp;
    grpc::Status st = docs->List(&ctx, req, &resp);
    EXPECT_TRUE(st.ok()) << st.error_message();
    if (!st.ok()) break;
    for (auto& d : *resp.mutable_documents()) out.push_back(std::move(d));
    token = resp.next_page_token();
  } while (!token.empty());
  return out;
}

}  // namespace neodb::testing
