// AdaptJob::Rollback: a collection back onto the model (and fusion) it had
// before adapt swapped it, as the adapt.json beside its current model records.
#include <cstdio>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "adapt/adapt_job.h"
#include "adapt/job_io.h"
#include "common/status_macros.h"
#include "encoder/model.h"

namespace neodb::adapt {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

// The adapt.json of the model `facts` names, when adapt made that model.
absl::StatusOr<json> RecordOf(const std::string& collection, const CollectionFacts& facts,
                              fs::path* path) {
  *path = fs::path(facts.model_dir) / "adapt.json";
  std::error_code ec;
  if (facts.model_dir.empty() || !fs::exists(*path, ec)) {
    return absl::FailedPreconditionError(
        absl::StrCat("collection ", collection, " is on ", facts.model_id, " (",
                     facts.model_dir.empty() ? "the default model" : facts.model_dir,
                     "), which neodb adapt did not make: nothing to roll back to"));
  }
  return ReadJsonFile(*path);
}

// The fusion the collection had before adapt (records from before
// per-collection fusions have none: adaptive).
absl::StatusOr<keyword::FusionOptions> PreviousFusion(const json& record) {
  keyword::FusionOptions fusion;
  ASSIGN_OR_RETURN(fusion.method,
                   keyword::ParseFusionMethod(
                       record.value("/previous/fusion"_json_pointer, std::string("adaptive"))));
  fusion.alpha = record.value("/previous/fusion_alpha"_json_pointer, 0.5);
  return fusion;
}

}  // namespace

absl::Status AdaptJob::Rollback() {
  const std::string& collection = a_.rollback;
  ASSIGN_OR_RETURN(const CollectionFacts facts, server_.Describe(collection));
  fs::path record_path;
  ASSIGN_OR_RETURN(const json record, RecordOf(collection, facts, &record_path));
  const std::string prev_dir = record.value("/previous/model_dir"_json_pointer, "");
  const std::string prev_id = record.value("/previous/model_id"_json_pointer, "");
  if (record.value("collection", "") != collection || prev_dir.empty() || prev_id.empty()) {
    return absl::FailedPreconditionError(absl::StrCat(
        record_path.string(), " records no previous model of collection ", collection));
  }
  // The previous checkpoint must still be the one the collection left.
  // Either architecture (adapt fine-tunes NeoBERT and BERT models alike).
  ASSIGN_OR_RETURN(const std::shared_ptr<const encoder::Model> prev, encoder::LoadModel(prev_dir));
  if (prev->model_id() != prev_id) {
    return absl::FailedPreconditionError(
        absl::StrCat("the previous model directory ", prev_dir, " now holds ", prev->model_id(),
                     ", not the recorded ", prev_id, "; not rolling back"));
  }
  RETURN_IF_ERROR(server_.ReindexAndWait(collection, prev_dir));
  ASSIGN_OR_RETURN(const keyword::FusionOptions prev_fusion, PreviousFusion(record));
  RETURN_IF_ERROR(server_.SetFusion(collection, prev_fusion));
  ASSIGN_OR_RETURN(const VerifyReport v, server_.Verify(collection));
  std::printf("rolled back: %s is on %s (%s); %s\n", collection.c_str(), v.model_id.c_str(),
              prev_dir.c_str(), VerifyCounts(v).c_str());
  return CheckVerifiedModel(v, prev_id, "the rollback");
}

}  // namespace neodb::adapt
