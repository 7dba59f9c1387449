#pragma once
// A model opened in process on the collection, and the collection's vectors
// under the current model saved between the job's stages (round 1's mining
// and the old model's evaluation read them instead of embedding the whole
// collection again).

#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "adapt/collection_eval.h"
#include "adapt/server_side.h"
#include "adapt/vector_cache.h"
#include "encoder/encoder.h"

namespace neodb::adapt {

// The model in `dir`, for embedding the collection in process; its precision
// note (a host without the instructions) on stderr.
absl::StatusOr<std::unique_ptr<encoder::Encoder>> OpenModel(const std::string& dir, int threads,
                                                            encoder::Precision precision);

// Progress of embedding the collection with the `label` model, on a line of
// `progress`.
std::function<void(int64_t, int64_t)> EmbedProgress(const std::string& label,
                                                    const NewProgress& progress);

// Where a model's vectors of the collection may have been saved, and for what.
struct SavedVectors {
  std::filesystem::path file;
  VectorCacheKey key;  // dim: 0 here, the encoder's when it is open
};

// Saves the current model's vectors of the collection [documents, dim]. Only
// a saving: when the disk refuses the file, a warning, and they are embedded
// again where needed.
bool SaveOldVectors(const SavedVectors& saved, const std::vector<float>& rows, int64_t dim);

// Saves the server's stored vectors of the collection (as its index holds
// them). False, with the reason on stderr, when the listing could not give
// them all or the disk refuses the file: then the collection is embedded in
// process, as a saving lost, never an error.
bool SaveStoredVectors(StoredVectors stored, const EmbedSettings& settings,
                       const SavedVectors& saved);

// Quality of the model in `model_dir` on each query set (EvaluateModel).
// `saved`: the collection's vectors under that model, used instead of
// embedding the collection when they are there and match (`*reused` says).
absl::StatusOr<std::vector<ModelQuality>> EvaluateDir(
    const std::string& label, const std::string& model_dir, int threads,
    const CollectionDocs& docs, const std::vector<const QuerySet*>& sets,
    const EmbedSettings& settings, const NewProgress& progress,
    const SavedVectors* saved = nullptr, bool* reused = nullptr);

}  // namespace neodb::adapt
