#pragma once
// DistillObjective: similarity distillation from a fixed teacher embedding
// (issue 21: the SIF-weighted GloVe average of research/glove/sif.py) as an
// objective a training loop adds to its step, like MlmObjective.
//
// Each step takes batch_size teacher texts (a seeded per-epoch permutation,
// so a step's data is a pure function of (seed, step) and a resumed run
// continues exactly), embeds them with the encoder (mean pooling) and pulls
// the student's pairwise cosine similarities towards the teacher's:
//   structure = mean over ordered pairs i != j of (cos_s(i, j) - cos_t(i, j))^2.
// The loss acts on the very cosine geometry retrieval uses (no learned
// projection whose null space could hide the student's own geometry), and
// it has no parameters of its own: nothing to checkpoint but the step.
//
// With DistillOptions::direct_weight w > 0 and a teacher of the student's
// dimension (`neodb distill`), loss = structure + w × direct, where
//   direct = mean over i of 1 - cos(student_i, teacher_i).
// Why both: the structure term is blind to any rotation of the student's
// space and each text's gradient depends on which texts share its batch; the
// direct term gives every text its own target, whatever the batch, and pins
// the student's coordinates to the teacher's, so student vectors can stand
// beside teacher vectors. It is the squared distance of the unit vectors
// (|u - t|^2 / 2): MSE distillation on normalised vectors, deaf to the
// student's norm, which no cosine reader sees. The structure term stays
// because ranking reads only cosines between texts: where a small student
// cannot match every coordinate, it spends its error where ranking does not
// look. With other dimensions there is no coordinate-wise target and the
// structure term works alone.
// Gradients flow GradCache-style: embed every text without activations,
// take d loss / d embeddings, re-run each chunk with activations and
// back-propagate its slice.
//
// Teacher file: JSON Lines {"text": "...", "vector": [numbers]}, every
// vector the same length, finite and non-zero. Every problem is an
// INVALID_ARGUMENT naming the file and the 1-based line.
//
// Not thread-safe.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/status_macros.h"
#include "encoder/tokenizer/tokenizer.h"
#include "encoder/train/train_model.h"
#include "nlohmann/json.hpp"

namespace neodb::encoder::train {

struct TeacherText {
  std::vector<int32_t> ids;   // [CLS] … [SEP]
  std::vector<float> vector;  // the teacher's embedding, unit length
  int64_t line = 0;           // 1-based line in the file
};

// Parses a teacher file's text (`name` prefixes errors: "teacher.jsonl:3: ...")
// and tokenises each text; a text over max_length tokens ([CLS]/[SEP]
// included) is an error naming the line, never cut (its teacher vector was
// computed from the whole text). Rejects malformed JSON, a non-object line, a
// missing/empty "text", a "vector" that is not a non-empty array of finite
// numbers, of another length than line 1's, or of zero norm, and a file with
// fewer than two texts.
absl::StatusOr<std::vector<TeacherText>> ParseTeacherTexts(const std::string& content,
                                                           const std::string& name,
                                                           const Tokenizer& tokenizer,
                                                           int64_t max_length);
// Reads and parses a file (NOT_FOUND when it cannot be opened).
absl::StatusOr<std::vector<TeacherText>> ReadTeacherTexts(const std::string& path,
                                                          const Tokenizer& tokenizer,
                                                          int64_t max_length);

// The loss above for n student embeddings [n, c] (any length; normalised
// here) against n unit teacher vectors [n, k]; WRITES d loss / d student into
// d_student [n, c]. REQUIRES: n >= 2. A zero student row has zero gradient.
template <typename T>
double SimilarityDistillLoss(const T* student, const float* teacher_unit, int64_t n, int64_t c,
                             int64_t k, T* d_student);

// The direct term above, mean over i of 1 - cos(student_i, teacher_i), for n
// student embeddings [n, c] (any length; normalised here) against n unit
// teacher vectors of the same dimension [n, c]; WRITES d loss / d student
// into d_student [n, c]. REQUIRES: n >= 1. A zero student row counts as
// cosine 0 and has zero gradient.
template <typename T>
double DirectDistillLoss(const T* student, const float* teacher_unit, int64_t n, int64_t c,
                         T* d_student);

struct DistillOptions {
  int64_t batch_size = 64;  // texts per step (2 ≤ batch ≤ texts). Default: 64
  int64_t chunk_size = 16;  // sequences per forward with activations. Default: 16
  uint64_t seed = 0;        // data order. Default: 0
  // Weight of the direct term (see the top of this file); used only when the
  // teacher's vectors have the student's dimension. 0 = the structure term
  // alone (finetune --distill's loss). Default: 0; `neodb distill`: 1.
  double direct_weight = 0;
};

struct DistillStepLoss {
  double loss = 0;
  int64_t tokens = 0;  // tokens run through the encoder (once per text)
};

class DistillObjective {
 public:
  static absl::StatusOr<std::unique_ptr<DistillObjective>> Create(std::vector<TeacherText> texts,
                                                                  const DistillOptions& options);

  // The text indices of 0-based step `step`.
  std::vector<int64_t> BatchForStep(int64_t step) const;

  // ADDS grad_scale × d loss / d params of step `step` for the parameters at
  // flat offset >= grad_begin into grads[offset - grad_begin].
  DistillStepLoss AccumulateStep(const TrainModel<float>& model, const float* params, int64_t step,
                                 float grad_scale, int64_t grad_begin, float* grads) const;

  // The loss of step `step`'s batch, no gradient (for tests and logs).
  double Evaluate(const TrainModel<float>& model, const float* params, int64_t step) const;

  int64_t num_texts() const { return static_cast<int64_t>(texts_.size()); }
  int64_t teacher_dim() const { return teacher_dim_; }
  // Whether a student of `student_dim` gets the direct term.
  bool UsesDirectTerm(int64_t student_dim) const {
    return options_.direct_weight > 0 && student_dim == teacher_dim_;
  }
  const DistillOptions& options() const { return options_; }
  // The settings and data size a resumed run must share with its checkpoint.
  nlohmann::json Identity() const;

 private:
  DistillObjective(std::vector<TeacherText> texts, const DistillOptions& options)
      : texts_(std::move(texts)), options_(options) {}
  // Embeddings [batch, C] of the texts (no activations kept).
  std::vector<float> Embed(const TrainModel<float>& model, const float* params,
                           const std::vector<int64_t>& idx) const;
  // The step's loss for student embeddings emb [n, c] against the teacher
  // rows of `idx`; WRITES d loss / d emb.
  double Loss(const std::vector<float>& emb, const std::vector<int64_t>& idx, int64_t c,
              float* d_emb) const;

  std::vector<TeacherText> texts_;
  DistillOptions options_;
  int64_t teacher_dim_ = 0;
};

}  // namespace neodb::encoder::train
