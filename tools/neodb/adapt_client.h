#pragma once
// AdaptClient: the calls `neodb adapt` and `neodb models list` make to a
// server (neodb.v1), over the channel of every client command (TLS, API key:
// tools/neodb/client_common.h), each under the --timeout deadline, each
// returning a Status (gRPC's "failed to connect to all addresses" said as
// "no neodb server at ADDR").
// Not thread-safe: one command drives it.

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "grpcpp/grpcpp.h"
#include "index/keyword/fusion.h"
#include "neodb/v1/neodb.grpc.pb.h"
#include "adapt/adapt_pairs.h"
#include "adapt/server_side.h"
#include "tools/neodb/client_common.h"

namespace neodb::cli {

class AdaptClient {
 public:
  explicit AdaptClient(const ClientFlags& flags);

  absl::StatusOr<v1::CollectionInfo> Describe(const std::string& name);
  absl::StatusOr<v1::ListCollectionsResponse> ListCollections();
  absl::StatusOr<v1::StatsResponse> Stats();
  // The vectors a collection stores for its documents, as the server serves
  // them (Get/List include_vector: bit for bit).
  using StoredVectors = adapt::StoredVectors;
  // Every document with its text and, when `title_field` is not empty, that
  // metadata field's string value as its title; paged (1,000 a page), in
  // document id order (byte order), so that a position breaks ties as the
  // server's document ids do; DATA_LOSS if the listing returns an id twice or
  // out of that order. With `stored`, also every
  // document's stored vector, kept only while all are `stored->model_id`'s
  // (a reindex under way mixes two models) and of one dimension.
  absl::StatusOr<adapt::CollectionDocs> ListDocuments(const std::string& name,
                                                      const std::string& title_field,
                                                      StoredVectors* stored = nullptr);
  // The ids of the collection's NearText top k for `query`, best first, in
  // `mode` ("" = the collection's default: what its users are served, hybrid).
  absl::StatusOr<std::vector<std::string>> NearTextIds(const std::string& collection,
                                                       const std::string& query, int k,
                                                       const std::string& mode);
  // Starts a reindex of `collection` onto `model_dir` and polls it to its
  // end, with progress on stderr. OK only when it finished (DONE).
  absl::Status ReindexAndWait(const std::string& collection, const std::string& model_dir);
  // Whether the server would start that reindex, asked before the model
  // exists (ReindexRequest.dry_run): the caller's key may reindex, the
  // collection exists and is the server's to re-embed, and the server accepts
  // `model_dir` (inside its --models-dir); starts nothing. The server's answer.
  absl::Status CheckReindex(const std::string& collection, const std::string& model_dir);
  absl::StatusOr<v1::VerifyResponse> Verify(const std::string& collection);
  // Sets the collection's default fusion (Collections.SetFusion).
  absl::Status SetFusion(const std::string& collection, const keyword::FusionOptions& fusion);

 private:
  template <typename Stub, typename Request, typename Response>
  absl::StatusOr<Response> Call(Stub& stub,
                                grpc::Status (Stub::*method)(grpc::ClientContext*, const Request&,
                                                             Response*),
                                const Request& req);

  const ClientFlags flags_;
  std::unique_ptr<v1::Collections::Stub> collections_;
  std::unique_ptr<v1::Documents::Stub> documents_;
  std::unique_ptr<v1::Search::Stub> search_;
  std::unique_ptr<v1::Admin::Stub> admin_;
};

}  // namespace neodb::cli
