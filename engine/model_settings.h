#pragma once
// The collection settings a model's directory decides (encoder::ModelDefaults:
// its sentence-transformers files and neodb_model.json), in the collection
// spec's terms. A collection created on a model takes them where the request
// says nothing (Database::CreateCollection); a reindex onto another model
// moves each setting the collection still holds at the old model's value to
// the new model's (AdoptModelSettings), so that a collection moved from the
// default model to BGE embeds with BGE's CLS pooling and query instruction
// and fuses as BGE was measured, while a setting the user chose stays.

#include <string>

#include "absl/status/statusor.h"
#include "db/collection_spec.h"
#include "encoder/model.h"

namespace neodb::engine {

struct ModelSettings {
  std::string pooling;  // PoolingName
  std::string query_instruction;
  std::string document_instruction;
  std::string fusion;  // keyword::FusionMethodName; "adaptive" when the model names none
  double fusion_alpha = 0.5;
};

// FAILED_PRECONDITION when neodb_model.json names a fusion neodb does not know.
absl::StatusOr<ModelSettings> ModelSettingsOf(const encoder::ModelDefaults& d);

// For each setting (pooling; the two instructions together; fusion with its
// alpha) that `spec` holds at `from`'s value, `to`'s. Returns whether
// anything changed.
bool AdoptModelSettings(const ModelSettings& from, const ModelSettings& to,
                        db::CollectionSpec* spec);

}  // namespace neodb::engine
