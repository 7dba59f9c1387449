#pragma once
// TrainSentencePiece: trains a SentencePiece model with neodb's special-token
// convention (SentencePieceTokenizer): pad "[PAD]" = 0, unk "[UNK]" = 1,
// bos "[CLS]" = 2, eos "[SEP]" = 3, and "[MASK]" as a user-defined symbol
// (id 4, always kept whole when it appears in text).
//
// Writes `<model_prefix>.model` and `<model_prefix>.vocab`. Not thread-safe
// with itself (libsentencepiece's trainer uses process-wide flags); run one
// training at a time.

#include <cstdint>
#include <string>
#include <vector>

#include "common/status_macros.h"

namespace neodb::encoder {

struct SentencePieceTrainOptions {
  // Plain-text files, one sentence per line. Required; paths must not
  // contain ','.
  std::vector<std::string> input_files;
  // Output prefix; its directory must exist. Required.
  std::string model_prefix;
  // Final vocabulary size, specials included. Default: 8000.
  int vocab_size = 8000;
  // "unigram" or "bpe". Default: "unigram".
  std::string model_type = "unigram";
  // Fraction of characters the model covers. Default: 0.9995.
  double character_coverage = 0.9995;
  // When false, vocab_size is an upper bound (lets small corpora train).
  // Default: true.
  bool hard_vocab_limit = true;
  // Sentences sampled from the input; 0 = all. Default: 0.
  int64_t input_sentence_size = 0;
  // Trainer threads. Default: 1 (deterministic).
  int num_threads = 1;
};

absl::Status TrainSentencePiece(const SentencePieceTrainOptions& options);

}  // namespace neodb::encoder
