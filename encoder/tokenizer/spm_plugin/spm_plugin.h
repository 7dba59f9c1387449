#pragma once
// The C boundary of libneodb_spm.so, the plugin that holds libsentencepiece.
//
// Why a plugin: Debian's libsentencepiece.so.0 exports its bundled copy of
// protobuf-lite (namespace google::protobuf); a program that also links
// libprotobuf.so (gRPC, i.e. `neodb serve`) gets one copy interposing the
// other and crashes. The encoder therefore loads this plugin with
// dlmopen(LM_ID_NEWLM) into its own link-map namespace (see
// sentencepiece_adapter.cc), where the plugin, libsentencepiece and their own
// libstdc++/libc never see libprotobuf.
//
// Contract, because the two sides may run different C++ runtimes and heaps:
// only C types cross this boundary; no exception escapes it; memory the
// plugin returns (ids, pieces, text) is freed with neodb_spm_free, never with
// the caller's free(). Error messages are copied into a caller buffer
// (`err`, `err_len` bytes, always NUL-terminated when err_len > 0). Return
// codes are absl::StatusCode values; 0 = OK.
//
// Thread-safety: a loaded processor may be used from several threads at once
// (libsentencepiece's const Encode/Decode); neodb_spm_train is not reentrant.

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

// Bumped whenever a signature below changes; the loader checks it.
#define NEODB_SPM_ABI_VERSION 1

typedef struct NeodbSpmProcessor NeodbSpmProcessor;

int neodb_spm_abi_version(void);

// Parses a serialized ModelProto. On success *out owns a processor to release
// with neodb_spm_processor_free.
int neodb_spm_processor_load(const char* bytes, size_t len, NeodbSpmProcessor** out, char* err,
                             size_t err_len);
void neodb_spm_processor_free(NeodbSpmProcessor* p);

// *ids (count *n) is plugin memory: neodb_spm_free it.
int neodb_spm_encode_ids(const NeodbSpmProcessor* p, const char* text, size_t len, int** ids,
                         size_t* n, char* err, size_t err_len);
// Pieces are packed into *data; piece i is data[offsets[i], offsets[i+1]);
// *offsets has *count + 1 entries. Both buffers are plugin memory.
int neodb_spm_encode_pieces(const NeodbSpmProcessor* p, const char* text, size_t len, char** data,
                            size_t** offsets, size_t* count, char* err, size_t err_len);
// *text (*text_len bytes, not NUL-terminated) is plugin memory.
int neodb_spm_decode(const NeodbSpmProcessor* p, const int* ids, size_t n, char** text,
                     size_t* text_len, char* err, size_t err_len);

int neodb_spm_piece_to_id(const NeodbSpmProcessor* p, const char* piece, size_t len);
// *piece (*len bytes) is plugin memory. Returns 0, or non-zero on allocation
// failure.
int neodb_spm_id_to_piece(const NeodbSpmProcessor* p, int id, char** piece, size_t* len);
int neodb_spm_piece_size(const NeodbSpmProcessor* p);
int neodb_spm_unk_id(const NeodbSpmProcessor* p);

// SentencePieceTrainer::Train with n keyword arguments (NUL-terminated).
int neodb_spm_train(const char* const* keys, const char* const* values, size_t n, char* err,
                    size_t err_len);

// Releases memory this plugin returned. NULL is a no-op.
void neodb_spm_free(void* ptr);

#ifdef __cplusplus
}  // extern "C"
#endif
