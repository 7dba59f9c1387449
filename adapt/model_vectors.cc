#include "adapt/model_vectors.h"

#include <cstdio>
#include <optional>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace neodb::adapt {

absl::StatusOr<std::unique_ptr<encoder::Encoder>> OpenModel(const std::string& dir, int threads,
                                                            encoder::Precision precision) {
  encoder::EncoderOptions eopts;
  eopts.backend.num_threads = threads > 0 ? threads : 1;
  eopts.backend.precision = precision;
  ASSIGN_OR_RETURN(std::unique_ptr<encoder::Encoder> enc, encoder::Encoder::Open(dir, eopts));
  if (!enc->precision_note().empty()) {
    std::fprintf(stderr, "%s\n", enc->precision_note().c_str());
  }
  return enc;
}

std::function<void(int64_t, int64_t)> EmbedProgress(const std::string& label,
                                                    const NewProgress& progress) {
  std::shared_ptr<ProgressSink> line;
  if (progress) line = progress();
  if (line == nullptr) return [](int64_t, int64_t) {};
  return [label, line](int64_t done, int64_t total) {
    const std::string text =
        absl::StrCat("embedding the collection with the ", label, " model: ", done, "/", total);
    if (done == total) {
      line->Finish(text);
    } else {
      line->Update(text);
    }
  };
}

bool SaveOldVectors(const SavedVectors& saved, const std::vector<float>& rows, int64_t dim) {
  VectorCacheKey key = saved.key;
  key.dim = dim;
  const absl::Status s = SaveDocVectors(saved.file, rows, key);
  if (!s.ok()) {
    std::fprintf(stderr, "warning: %s; the old model will embed the collection again\n",
                 std::string(s.message()).c_str());
  }
  return s.ok();
}

bool SaveStoredVectors(StoredVectors stored, const EmbedSettings& settings,
                       const SavedVectors& saved) {
  if (stored.rows.empty()) {
    std::fprintf(stderr, "old model: the server's stored vectors are not usable (%s)\n",
                 stored.why_not.empty() ? "none listed" : stored.why_not.c_str());
    return false;
  }
  AsIndexed(stored.rows, stored.dim, settings.metric);
  if (!SaveOldVectors(saved, stored.rows, stored.dim)) return false;
  std::fprintf(stderr, "old model: the server's stored vectors (%lld x %d)\n",
               static_cast<long long>(saved.key.documents), stored.dim);
  return true;
}

absl::StatusOr<std::vector<ModelQuality>> EvaluateDir(
    const std::string& label, const std::string& model_dir, int threads,
    const CollectionDocs& docs, const std::vector<const QuerySet*>& sets,
    const EmbedSettings& settings, const NewProgress& progress, const SavedVectors* saved,
    bool* reused) {
  ASSIGN_OR_RETURN(std::unique_ptr<encoder::Encoder> enc,
                   OpenModel(model_dir, threads, settings.precision));
  std::optional<std::vector<float>> doc_vecs;
  if (saved != nullptr) {
    VectorCacheKey key = saved->key;
    key.dim = enc->dim();
    std::string why_not;
    doc_vecs = LoadDocVectors(saved->file, key, &why_not);
    if (!doc_vecs) {
      std::fprintf(stderr, "%s model: embedding the collection (%s)\n", label.c_str(),
                   why_not.c_str());
    }
  }
  if (reused != nullptr) *reused = doc_vecs.has_value();
  return EvaluateModel(*enc, docs, sets, settings, EmbedProgress(label, progress),
                       doc_vecs ? &*doc_vecs : nullptr);
}

}  // namespace neodb::adapt
