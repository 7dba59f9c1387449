#include "tools/neodb/adapt_server_side.h"

#include <algorithm>

#include "api/convert.h"
#include "common/status_macros.h"
#include "engine/embed_settings.h"
#include "tools/neodb/progress_line.h"

namespace neodb::cli {
namespace {

class StderrLine : public adapt::ProgressSink {
 public:
  void Update(const std::string& text) override { line_.Update(text); }
  void Finish(const std::string& text) override { line_.Finish(text); }

 private:
  ProgressLine line_;
};

}  // namespace

absl::StatusOr<adapt::CollectionReading> ReadCollection(const v1::CollectionInfo& info) {
  ASSIGN_OR_RETURN(db::CollectionSpec spec, api::FromProto(info.spec()));
  // What the server fixed when it created the collection (the request's spec
  // leaves them to it).
  spec.dimension = static_cast<uint32_t>(std::max(info.dimension(), 0));
  spec.model_id = info.model_id();
  ASSIGN_OR_RETURN(const engine::CollectionSettings parsed, engine::ParseSettings(spec));
  adapt::CollectionReading r;
  r.embed.metric = parsed.metric;
  r.embed.pooling = parsed.pooling;
  r.embed.overflow = parsed.overflow;
  r.embed.document_prefix = spec.document_instruction;
  r.embed.query_prefix = spec.query_instruction;
  // What the server computes the vectors in (empty from a server that
  // predates per-collection precision: f32).
  if (!spec.precision.empty()) {
    ASSIGN_OR_RETURN(r.embed.precision, encoder::ParsePrecision(spec.precision));
  }
  r.embed.fusion = parsed.fusion;
  r.keyword.options = parsed.keyword;
  r.keyword.title_weight = parsed.title_weight;
  r.title_field = parsed.title_field;
  return r;
}

adapt::NewProgress StderrProgress() {
  return [] { return std::make_unique<StderrLine>(); };
}

AdaptClient& GrpcServerSide::client() {
  if (client_ == nullptr) client_ = std::make_unique<AdaptClient>(flags_);
  return *client_;
}

absl::StatusOr<adapt::CollectionFacts> GrpcServerSide::Describe(const std::string& collection) {
  ASSIGN_OR_RETURN(const v1::CollectionInfo info, client().Describe(collection));
  adapt::CollectionFacts facts;
  facts.model_id = info.model_id();
  facts.model_dir = info.model_dir();
  facts.external_vectors = info.spec().vectors() == v1::VECTOR_SOURCE_EXTERNAL;
  facts.reading = ReadCollection(info);
  return facts;
}

absl::StatusOr<std::string> GrpcServerSide::ModelsDir() {
  ASSIGN_OR_RETURN(const v1::StatsResponse stats, client().Stats());
  return stats.models_dir();
}

absl::StatusOr<adapt::CollectionDocs> GrpcServerSide::ListDocuments(
    const std::string& collection, const std::string& title_field, adapt::StoredVectors* stored) {
  return client().ListDocuments(collection, title_field, stored);
}

absl::StatusOr<std::vector<std::string>> GrpcServerSide::NearTextIds(
    const std::string& collection, const std::string& query, int k, const std::string& mode) {
  return client().NearTextIds(collection, query, k, mode);
}

absl::Status GrpcServerSide::CheckReindex(const std::string& collection,
                                          const std::string& model_dir) {
  return client().CheckReindex(collection, model_dir);
}

absl::Status GrpcServerSide::ReindexAndWait(const std::string& collection,
                                            const std::string& model_dir) {
  return client().ReindexAndWait(collection, model_dir);
}

absl::Status GrpcServerSide::SetFusion(const std::string& collection,
                                       const keyword::FusionOptions& fusion) {
  return client().SetFusion(collection, fusion);
}

absl::StatusOr<adapt::VerifyReport> GrpcServerSide::Verify(const std::string& collection) {
  ASSIGN_OR_RETURN(const v1::VerifyResponse v, client().Verify(collection));
  return adapt::VerifyReport{.model_id = v.model_id(),
                             .stored = v.stored(),
                             .indexed = v.indexed(),
                             .foreign_model = v.foreign_model()};
}

}  // namespace neodb::cli
