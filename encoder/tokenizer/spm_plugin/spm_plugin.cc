// libneodb_spm.so: the only code that includes libsentencepiece's headers.
// No abseil header here either: Debian's sentencepiece 0.1.97 declares
// `namespace absl { using std::string_view; }` in its public header.
#include "encoder/tokenizer/spm_plugin/spm_plugin.h"

#include <sentencepiece_processor.h>
#include <sentencepiece_trainer.h>

#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <new>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

struct NeodbSpmProcessor {
  sentencepiece::SentencePieceProcessor impl;
};

namespace {

constexpr int kInternal = 13;           // absl::StatusCode::kInternal
constexpr int kResourceExhausted = 8;   // absl::StatusCode::kResourceExhausted
constexpr int kFailedPrecondition = 9;  // absl::StatusCode::kFailedPrecondition

void CopyError(std::string_view message, char* err, size_t err_len) {
  if (err == nullptr || err_len == 0) return;
  const size_t n = message.size() < err_len - 1 ? message.size() : err_len - 1;
  std::memcpy(err, message.data(), n);
  err[n] = '\0';
}

int Convert(const sentencepiece::util::Status& s, char* err, size_t err_len) {
  if (s.ok()) return 0;
  CopyError(s.error_message(), err, err_len);
  return static_cast<int>(s.code());
}

// Every entry point runs its body through this: no exception crosses the C
// boundary (libsentencepiece and std may throw, e.g. bad_alloc).
template <typename F>
int Guard(char* err, size_t err_len, F&& body) {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    CopyError("out of memory", err, err_len);
    return kResourceExhausted;
  } catch (const std::exception& e) {
    CopyError(e.what(), err, err_len);
    return kInternal;
  } catch (...) {
    CopyError("unknown exception", err, err_len);
    return kInternal;
  }
}

// Plugin-heap copy of `bytes`; nullptr on allocation failure.
template <typename T>
T* CopyOut(const T* src, size_t n) {
  T* dst = static_cast<T*>(std::malloc(n == 0 ? 1 : n * sizeof(T)));
  if (dst != nullptr && n > 0) std::memcpy(dst, src, n * sizeof(T));
  return dst;
}

int NoProcessor(char* err, size_t err_len) {
  CopyError("no SentencePiece model is loaded", err, err_len);
  return kFailedPrecondition;
}

}  // namespace

extern "C" {

int neodb_spm_abi_version(void) { return NEODB_SPM_ABI_VERSION; }

int neodb_spm_processor_load(const char* bytes, size_t len, NeodbSpmProcessor** out, char* err,
                             size_t err_len) {
  *out = nullptr;
  return Guard(err, err_len, [&] {
    // Owned until handed out: libsentencepiece may throw part way through a
    // hostile model (Guard turns that into an error), and the processor must
    // not leak then either.
    auto p = std::make_unique<NeodbSpmProcessor>();
    const int code =
        Convert(p->impl.LoadFromSerializedProto(std::string_view(bytes, len)), err, err_len);
    if (code != 0) return code;
    *out = p.release();
    return 0;
  });
}

void neodb_spm_processor_free(NeodbSpmProcessor* p) { delete p; }

int neodb_spm_encode_ids(const NeodbSpmProcessor* p, const char* text, size_t len, int** ids,
                         size_t* n, char* err, size_t err_len) {
  *ids = nullptr;
  *n = 0;
  if (p == nullptr) return NoProcessor(err, err_len);
  return Guard(err, err_len, [&] {
    std::vector<int> v;
    const int code = Convert(p->impl.Encode(std::string_view(text, len), &v), err, err_len);
    if (code != 0) return code;
    *ids = CopyOut(v.data(), v.size());
    if (*ids == nullptr) throw std::bad_alloc();
    *n = v.size();
    return 0;
  });
}

int neodb_spm_encode_pieces(const NeodbSpmProcessor* p, const char* text, size_t len, char** data,
                            size_t** offsets, size_t* count, char* err, size_t err_len) {
  *data = nullptr;
  *offsets = nullptr;
  *count = 0;
  if (p == nullptr) return NoProcessor(err, err_len);
  return Guard(err, err_len, [&] {
    std::vector<std::string> pieces;
    const int code = Convert(p->impl.Encode(std::string_view(text, len), &pieces), err, err_len);
    if (code != 0) return code;
    std::string packed;
    std::vector<size_t> offs;
    offs.reserve(pieces.size() + 1);
    offs.push_back(0);
    for (const std::string& piece : pieces) {
      packed += piece;
      offs.push_back(packed.size());
    }
    char* d = CopyOut(packed.data(), packed.size());
    size_t* o = CopyOut(offs.data(), offs.size());
    if (d == nullptr || o == nullptr) {
      std::free(d);
      std::free(o);
      throw std::bad_alloc();
    }
    *data = d;
    *offsets = o;
    *count = pieces.size();
    return 0;
  });
}

int neodb_spm_decode(const NeodbSpmProcessor* p, const int* ids, size_t n, char** text,
                     size_t* text_len, char* err, size_t err_len) {
  *text = nullptr;
  *text_len = 0;
  if (p == nullptr) return NoProcessor(err, err_len);
  return Guard(err, err_len, [&] {
    std::string out;
    const int code = Convert(p->impl.Decode(std::vector<int>(ids, ids + n), &out), err, err_len);
    if (code != 0) return code;
    *text = CopyOut(out.data(), out.size());
    if (*text == nullptr) throw std::bad_alloc();
    *text_len = out.size();
    return 0;
  });
}

int neodb_spm_piece_to_id(const NeodbSpmProcessor* p, const char* piece, size_t len) {
  if (p == nullptr) return -1;
  try {
    return p->impl.PieceToId(std::string_view(piece, len));
  } catch (...) {
    return -1;
  }
}

int neodb_spm_id_to_piece(const NeodbSpmProcessor* p, int id, char** piece, size_t* len) {
  *piece = nullptr;
  *len = 0;
  if (p == nullptr) return kFailedPrecondition;
  return Guard(nullptr, 0, [&] {
    const std::string s = p->impl.IdToPiece(id);
    *piece = CopyOut(s.data(), s.size());
    if (*piece == nullptr) throw std::bad_alloc();
    *len = s.size();
    return 0;
  });
}

int neodb_spm_piece_size(const NeodbSpmProcessor* p) {
  return p == nullptr ? 0 : p->impl.GetPieceSize();
}

int neodb_spm_unk_id(const NeodbSpmProcessor* p) { return p == nullptr ? -1 : p->impl.unk_id(); }

int neodb_spm_train(const char* const* keys, const char* const* values, size_t n, char* err,
                    size_t err_len) {
  return Guard(err, err_len, [&] {
    std::unordered_map<std::string, std::string> args;
    for (size_t i = 0; i < n; ++i) args[keys[i]] = values[i];
    return Convert(sentencepiece::SentencePieceTrainer::Train(args), err, err_len);
  });
}

void neodb_spm_free(void* ptr) { std::free(ptr); }

}  // extern "C"
