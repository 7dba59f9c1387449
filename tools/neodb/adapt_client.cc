#include "tools/neodb/adapt_client.h"

#include <cstdio>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "tools/neodb/progress_line.h"
#include "tools/neodb/reindex_wait.h"

namespace neodb::cli {

AdaptClient::AdaptClient(const ClientFlags& flags) : flags_(flags) {
  // The channel every client command opens: TLS when --tls-* are given.
  auto channel = Connect(flags_);
  collections_ = v1::Collections::NewStub(channel);
  documents_ = v1::Documents::NewStub(channel);
  search_ = v1::Search::NewStub(channel);
  admin_ = v1::Admin::NewStub(channel);
}

template <typename Stub, typename Request, typename Response>
absl::StatusOr<Response> AdaptClient::Call(Stub& stub,
                                           grpc::Status (Stub::*method)(grpc::ClientContext*,
                                                                        const Request&, Response*),
                                           const Request& req) {
  grpc::ClientContext ctx;
  SetDeadline(&ctx, flags_);  // and the API key
  Response resp;
  const grpc::Status s = (stub.*method)(&ctx, req, &resp);
  if (s.ok()) return resp;
  return CallStatus(s, flags_);
}

absl::StatusOr<v1::CollectionInfo> AdaptClient::Describe(const std::string& name) {
  v1::DescribeCollectionRequest req;
  req.set_name(name);
  ASSIGN_OR_RETURN(auto resp, Call(*collections_, &v1::Collections::Stub::Describe, req));
  return resp.info();
}

absl::StatusOr<v1::ListCollectionsResponse> AdaptClient::ListCollections() {
  return Call(*collections_, &v1::Collections::Stub::List, v1::ListCollectionsRequest{});
}

absl::StatusOr<v1::StatsResponse> AdaptClient::Stats() {
  return Call(*admin_, &v1::Admin::Stub::Stats, v1::StatsRequest{});
}

absl::StatusOr<adapt::CollectionDocs> AdaptClient::ListDocuments(const std::string& name,
                                                                 const std::string& title_field,
                                                                 StoredVectors* stored) {
  adapt::CollectionDocs docs;
  v1::ListDocumentsRequest req;
  req.set_collection(name);
  req.set_page_size(1000);
  req.set_include_text(true);
  req.set_include_metadata(!title_field.empty());
  req.set_include_vector(stored != nullptr);
  // Kept only while every document's vector is the model's, of one dimension.
  auto give_up = [stored](std::string why) {
    stored->why_not = std::move(why);
    stored->dim = 0;
    std::vector<float>().swap(stored->rows);
  };
  do {
    ASSIGN_OR_RETURN(auto resp, Call(*documents_, &v1::Documents::Stub::List, req));
    for (const v1::Document& d : resp.documents()) {
      if (docs.index_of_id.contains(d.id())) {
        return absl::DataLossError(absl::StrCat("listing returned ", d.id(), " twice"));
      }
      // Positions break ties in adapt's rankings as document ids do in the
      // server's (index/keyword/fusion.h): only while the listing is in id order.
      if (!docs.ids.empty() && !(docs.ids.back() < d.id())) {
        return absl::DataLossError(absl::StrCat("listing returned ", d.id(), " after ",
                                                docs.ids.back(), ", not in document id order"));
      }
      std::string title;
      if (!title_field.empty()) {
        // As the server's keyword part: a title field that is not a string is no title.
        auto it = d.metadata().find(title_field);
        if (it != d.metadata().end() && it->second.has_string_value()) {
          title = it->second.string_value();
        }
      }
      if (stored != nullptr && stored->why_not.empty()) {
        if (d.vector_model_id() != stored->model_id) {
          give_up(absl::StrCat("document ", d.id(), " holds a vector of ",
                               d.vector_model_id().empty() ? "no model" : d.vector_model_id()));
        } else if (d.vector_size() == 0 || (stored->dim != 0 && d.vector_size() != stored->dim)) {
          give_up(
              absl::StrCat("document ", d.id(), " holds a vector of ", d.vector_size(), " dims"));
        } else {
          stored->dim = d.vector_size();
          stored->rows.insert(stored->rows.end(), d.vector().begin(), d.vector().end());
        }
      }
      docs.Add(d.id(), d.text(), std::move(title));
    }
    req.set_page_token(resp.next_page_token());
  } while (!req.page_token().empty());
  return docs;
}

absl::StatusOr<std::vector<std::string>> AdaptClient::NearTextIds(const std::string& collection,
                                                                  const std::string& query, int k,
                                                                  const std::string& mode) {
  v1::NearTextRequest req;
  req.set_collection(collection);
  req.set_query(query);
  req.set_k(k);
  req.set_mode(mode);
  ASSIGN_OR_RETURN(auto resp, Call(*search_, &v1::Search::Stub::NearText, req));
  std::vector<std::string> ids;
  for (const v1::Hit& h : resp.hits()) ids.push_back(h.id());
  return ids;
}

absl::Status AdaptClient::SetFusion(const std::string& collection,
                                    const keyword::FusionOptions& fusion) {
  v1::SetFusionRequest req;
  req.set_name(collection);
  req.set_fusion(std::string(keyword::FusionMethodName(fusion.method)));
  if (fusion.method == keyword::FusionMethod::kWeighted) req.set_alpha(fusion.alpha);
  return Call(*collections_, &v1::Collections::Stub::SetFusion, req).status();
}

absl::Status AdaptClient::ReindexAndWait(const std::string& collection,
                                         const std::string& model_dir) {
  v1::ReindexRequest req;
  req.set_collection(collection);
  req.set_model_dir(model_dir);
  RETURN_IF_ERROR(Call(*admin_, &v1::Admin::Stub::Reindex, req).status());
  v1::ReindexStatusRequest sreq;
  sreq.set_collection(collection);
  ProgressLine progress;
  return WaitForReindex([&] { return Call(*admin_, &v1::Admin::Stub::ReindexStatus, sreq); },
                        collection, absl::StrCat("reindex ", collection), progress)
      .status();
}

absl::Status AdaptClient::CheckReindex(const std::string& collection,
                                       const std::string& model_dir) {
  v1::ReindexRequest req;
  req.set_collection(collection);
  req.set_model_dir(model_dir);
  req.set_dry_run(true);
  return Call(*admin_, &v1::Admin::Stub::Reindex, req).status();
}

absl::StatusOr<v1::VerifyResponse> AdaptClient::Verify(const std::string& collection) {
  v1::VerifyRequest req;
  req.set_collection(collection);
  return Call(*admin_, &v1::Admin::Stub::Verify, req);
}

}  // namespace neodb::cli
