#pragma once
// What the adapt job asks of the server that holds the collection, as an
// interface: the job trains and measures in process, and only these calls
// cross to the server. `neodb adapt` implements it over gRPC
// (tools/neodb/adapt_server_side.h); the job's test over a fake. The job
// knows no gRPC and no proto, so it can sit beside the engine (README,
// "Architecture").

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "adapt/adapt_pairs.h"
#include "adapt/collection_eval.h"
#include "index/keyword/fusion.h"

namespace neodb::adapt {

// How the collection embeds and how its keyword index reads a document,
// read from its spec through the server's own parsers, so that what adapt
// mines and measures is what the collection serves.
struct CollectionReading {
  EmbedSettings embed;
  KeywordSettings keyword;
  std::string title_field;  // "" = none
};

// What the server says of a collection (Describe).
struct CollectionFacts {
  std::string model_id;
  std::string model_dir;  // "" = the server's unnamed default model
  // Its documents' vectors are the client's, not a model's of this server.
  bool external_vectors = false;
  // The spec read as the server reads it, or why it could not be; only
  // looked at after the checks that need none of it (a rollback never does).
  absl::StatusOr<CollectionReading> reading = absl::UnknownError("not read");
};

// The vectors a collection stores for its documents, as the server serves
// them (bit for bit).
struct StoredVectors {
  std::string model_id;     // in: the collection's model; every vector must be its
  std::vector<float> rows;  // out: [documents, dim] in list order; empty if not all are
  int dim = 0;
  std::string why_not;  // out: why `rows` is empty ("" when it is not)
};

// What the server's Verify counts after a swap.
struct VerifyReport {
  std::string model_id;
  uint64_t stored = 0;
  uint64_t indexed = 0;
  uint64_t foreign_model = 0;
};

class ServerSide {
 public:
  virtual ~ServerSide() = default;

  virtual absl::StatusOr<CollectionFacts> Describe(const std::string& collection) = 0;
  // The server's models directory ("" when it has none, or the key may not see it).
  virtual absl::StatusOr<std::string> ModelsDir() = 0;
  // Every document with its text and, when `title_field` is not empty, that
  // metadata field's string value as its title, in document id order; with
  // `stored`, also every document's stored vector (StoredVectors says when
  // they are not all usable).
  virtual absl::StatusOr<CollectionDocs> ListDocuments(const std::string& collection,
                                                       const std::string& title_field,
                                                       StoredVectors* stored) = 0;
  // The ids of the collection's top k for `query`, best first, in `mode`
  // ("" = the collection's default: what its users are served).
  virtual absl::StatusOr<std::vector<std::string>> NearTextIds(const std::string& collection,
                                                               const std::string& query, int k,
                                                               const std::string& mode) = 0;
  // Whether the server would reindex `collection` onto `model_dir` (a dry
  // run: starts nothing). The server's answer.
  virtual absl::Status CheckReindex(const std::string& collection,
                                    const std::string& model_dir) = 0;
  // Reindexes `collection` onto `model_dir` and waits for the end; OK only
  // when it finished.
  virtual absl::Status ReindexAndWait(const std::string& collection,
                                      const std::string& model_dir) = 0;
  virtual absl::Status SetFusion(const std::string& collection,
                                 const keyword::FusionOptions& fusion) = 0;
  virtual absl::StatusOr<VerifyReport> Verify(const std::string& collection) = 0;
};

// One line of progress kept current while the job mines or embeds (the CLI
// draws it on stderr, tools/neodb/progress_line.h).
class ProgressSink {
 public:
  virtual ~ProgressSink() = default;
  virtual void Update(const std::string& text) = 0;
  virtual void Finish(const std::string& text) = 0;
};

// A new line per long piece of work; null (or one returning null) draws none.
using NewProgress = std::function<std::unique_ptr<ProgressSink>()>;

}  // namespace neodb::adapt
