#pragma once
// The teacher cache of `neodb distill`: a teacher model's vectors of a plain
// text file, computed once by neodb itself and kept in a directory so that a
// rerun, a --resume or another student reuses them.
//
// <cache_dir>/cache.json   identity, written (atomically) before any vector:
//   {"format": "neodb-distill-cache-1",
//    "teacher": {"model_id", "dir", "pooling", "normalize", "prefix", "max_length", "dim"},
//    "texts": {"file", "hash" (XXH3-64 of the bytes), "lines" (non-blank)},
//    "fitted": {"count", "cut", "hash", "student_max_length"}, "batch_lines"}
// <cache_dir>/teacher.jsonl  one {"text", "vector"} line per kept text, in file
//   order: DistillObjective's teacher format. Floats in shortest round-trip digits.
//
// Texts: one per '\n'-separated line of UTF-8 (trailing spaces, tabs and '\r'
// dropped; a line of nothing else is skipped; invalid UTF-8 is an error naming
// the line). The teacher embeds each as a document: its document prompt (if
// its directory has one), its own pooling and normalisation. A text over the
// teacher's max_length (prompt and [CLS]/[SEP] included) or the student's is
// CUT, not skipped: to its longest prefix ending at a word (ASCII whitespace)
// boundary that fits both tokenizers — inside a first word longer than that,
// at a character boundary — and the cached "text" is the cut text, so the
// teacher's vector is of exactly what the student will read. Cuts are counted
// in the log and cache.json.
//
// A cache.json whose teacher (model id, pooling, normalisation, prompt, length)
// or texts (file hash) differ from this run's is refused with a message; so is
// one whose fitted texts differ (a student with another tokenizer or length
// cut them differently). `dir` and `file` are informational only: moving the
// files is fine.
//
// Resume: vectors are appended K = batch_lines texts at a time (one write and
// fsync per batch). A rerun keeps every complete batch of complete lines,
// truncates the rest (a torn last line and the lines of its unfinished batch)
// and continues from there, so with the same K and threads the finished file
// equals an uninterrupted run's byte for byte. A complete line that is not the
// text it should be is DATA_LOSS.
//
// Not thread-safe; one process per cache directory.

#include <cstdint>
#include <cstdio>
#include <string>

#include "common/status_macros.h"
#include "encoder/tokenizer/tokenizer.h"
#include "nlohmann/json.hpp"

namespace neodb::encoder::train {

struct TeacherCacheOptions {
  std::string teacher_dir;  // any architecture neodb runs (encoder/model.h)
  std::string texts_file;   // one text per line
  std::string cache_dir;    // created if missing
  // The student's tokenizer and longest sequence ([CLS]/[SEP] included):
  // texts are cut to fit it as well as the teacher. Not owned; REQUIRED.
  const Tokenizer* student_tokenizer = nullptr;
  int64_t student_max_length = 0;
  int64_t batch_lines = 256;     // texts per teacher forward and per append. Default: 256
  int threads = 1;               // the teacher's CPU threads (>= 1). Default: 1
  double progress_seconds = 5;   // at most one progress line this often. Default: 5
};

struct TeacherCacheInfo {
  std::string teacher_file;  // <cache_dir>/teacher.jsonl
  std::string teacher_model_id;
  int64_t teacher_dim = 0;
  int64_t texts = 0;     // lines of the finished file
  int64_t cut = 0;       // of them, texts cut to fit
  int64_t reused = 0;    // lines kept from an earlier run
  int64_t embedded = 0;  // lines embedded by this call
  nlohmann::json identity;  // cache.json
};

// Builds or completes the cache. `log` gets the summary, `progress` the
// progress lines (lines done / total, texts/s) while it embeds.
absl::StatusOr<TeacherCacheInfo> BuildTeacherCache(const TeacherCacheOptions& options,
                                                   std::FILE* log, std::FILE* progress);

}  // namespace neodb::encoder::train
