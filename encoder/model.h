#pragma once
// Model: a loaded encoder of any architecture neodb runs. The rest of neodb
// sees only this: the model's sizes, its fingerprint, and how to place it on
// a device. One subclass per architecture, each over that architecture's one
// weight layout (NeoBERT: checkpoint/weights.h, models/neobert.h; the BERT
// family: checkpoint/bert_weights.h, models/bert.h).
//
// ModelDefaults are what a model directory says about using the model beyond
// its weights: the sentence-transformers files (modules.json, the pooling
// module's config.json, config_sentence_transformers.json's prompts) and
// neodb's own neodb_model.json (the hybrid fusion the model was measured
// with). A
// collection created on the model takes them unless the request says
// otherwise.
//
// Thread-safety: immutable after loading.

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "common/status_macros.h"
#include "encoder/backend.h"
#include "encoder/checkpoint/bert_weights.h"
#include "encoder/checkpoint/weights.h"

namespace neodb::encoder {

enum class Architecture : uint8_t { kNeoBert, kBert };
// "neobert" | "bert": the config.json model_type of each.
std::string_view ArchitectureName(Architecture architecture);

struct ModelDefaults {
  Pooling pooling = Pooling::kMean;
  bool normalize = false;
  std::string query_prefix;     // prompts["query"]
  std::string document_prefix;  // prompts["document"], else ["passage"], else ["corpus"]
  // sentence_bert_config.json's max_seq_length: the longest input, in
  // tokens with [CLS]/[SEP], the model was published for (all-MiniLM-L6-v2:
  // 256 of its 512 positions). 0: the model's own limit.
  int64_t max_length = 0;
  // neodb_model.json's "hybrid": how hybrid queries on a collection of this
  // model fuse when neither the collection nor the query names a fusion
  // ("adaptive", "weighted" or "rrf"; checked where fusion is known, in the
  // engine) and, for weighted, the vector leg's share. Empty: the engine's
  // default (adaptive). Why a model says it: how much a vector leg should
  // count is a property of the model (a pretrained retriever earns half the
  // say on every collection measured; a weak model earns almost none), and
  // no per-query signal tells the two apart (index/keyword/README.md).
  std::string hybrid_fusion;
  double hybrid_alpha = 0.5;
};

class Model {
 public:
  virtual ~Model() = default;
  virtual Architecture architecture() const = 0;
  virtual int64_t hidden_size() const = 0;
  virtual int64_t vocab_size() const = 0;
  // Tokens one sequence may hold, [CLS] and [SEP] included.
  virtual int64_t max_length() const = 0;
  virtual int64_t num_layers() const = 0;
  virtual int64_t parameter_count() const = 0;
  virtual const std::string& model_id() const = 0;
  // A backend on options.device; on the CPU in `cpu_precision`, which the
  // host must run (CpuPrecisionFor). CUDA errors as MakeCudaBackend's;
  // UNIMPLEMENTED for an architecture without CUDA bodies.
  virtual absl::StatusOr<std::unique_ptr<Backend>> MakeBackend(const BackendOptions& options,
                                                               Precision cpu_precision) const = 0;
  // The NeoBERT weights, or nullptr for another architecture (training and
  // the NeoBERT-only tools take these).
  virtual std::shared_ptr<const NeoBertWeights> neobert() const { return nullptr; }
};

std::shared_ptr<const Model> MakeNeoBertModel(std::shared_ptr<const NeoBertWeights> weights);
std::shared_ptr<const Model> MakeBertModel(std::shared_ptr<const BertWeights> weights);

// The architecture config.json in `dir` names (its model_type), with an
// error listing what neodb runs for any other.
absl::StatusOr<Architecture> ReadArchitecture(const std::string& dir);

// Loads the checkpoint in `dir` with its architecture's loader.
absl::StatusOr<std::shared_ptr<const Model>> LoadModel(const std::string& dir);

// The sentence-transformers settings and neodb_model.json in `dir`, or the
// defaults when it has none of those files. A pooling neodb does not run (max, mean of square
// root length, weighted, last token) is INVALID_ARGUMENT naming the file.
absl::StatusOr<ModelDefaults> LoadModelDefaults(const std::string& dir);

}  // namespace neodb::encoder
