#pragma once
// The adapt job's server (adapt::ServerSide) over gRPC: AdaptClient's calls,
// and the collection's spec read through the server's own parsers
// (api::FromProto, then engine::ParseSettings), so that what adapt mines and
// measures is what the collection serves. The one client-side file that
// reads a spec as the server does: the others send names and let the server
// judge them.

#include <memory>
#include <string>
#include <vector>

#include "adapt/server_side.h"
#include "neodb/v1/neodb.pb.h"
#include "tools/neodb/adapt_client.h"

namespace neodb::cli {

// How the collection embeds and how its keyword index reads a document, from
// the server's description of it.
absl::StatusOr<adapt::CollectionReading> ReadCollection(const v1::CollectionInfo& info);

// A line of progress on stderr (ProgressLine) per piece of long work.
adapt::NewProgress StderrProgress();

class GrpcServerSide : public adapt::ServerSide {
 public:
  explicit GrpcServerSide(const ClientFlags& flags) : flags_(flags) {}

  absl::StatusOr<adapt::CollectionFacts> Describe(const std::string& collection) override;
  absl::StatusOr<std::string> ModelsDir() override;
  absl::StatusOr<adapt::CollectionDocs> ListDocuments(const std::string& collection,
                                                      const std::string& title_field,
                                                      adapt::StoredVectors* stored) override;
  absl::StatusOr<std::vector<std::string>> NearTextIds(const std::string& collection,
                                                       const std::string& query, int k,
                                                       const std::string& mode) override;
  absl::Status CheckReindex(const std::string& collection, const std::string& model_dir) override;
  absl::Status ReindexAndWait(const std::string& collection,
                              const std::string& model_dir) override;
  absl::Status SetFusion(const std::string& collection,
                         const keyword::FusionOptions& fusion) override;
  absl::StatusOr<adapt::VerifyReport> Verify(const std::string& collection) override;

 private:
  // Connected on the first call, so that the job's own checks (the flags'
  // numbers) come before the channel's (the TLS files).
  AdaptClient& client();

  const ClientFlags flags_;
  std::unique_ptr<AdaptClient> client_;
};

}  // namespace neodb::cli
