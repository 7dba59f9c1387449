#include "encoder/tokenizer/sentencepiece_adapter.h"

#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <system_error>
#include <utility>

#include "encoder/core/file_util.h"
#include "encoder/tokenizer/spm_plugin/spm_plugin.h"

namespace neodb::encoder::spm {
namespace {

constexpr int kFailedPrecondition = 9;  // absl::StatusCode::kFailedPrecondition
constexpr size_t kErrLen = 1024;

// The plugin's entry points. Filled by dlsym, or (NEODB_SPM_STATIC) with the
// functions linked into this library.
struct Api {
  int (*abi_version)();
  int (*processor_load)(const char*, size_t, NeodbSpmProcessor**, char*, size_t);
  void (*processor_free)(NeodbSpmProcessor*);
  int (*encode_ids)(const NeodbSpmProcessor*, const char*, size_t, int**, size_t*, char*, size_t);
  int (*encode_pieces)(const NeodbSpmProcessor*, const char*, size_t, char**, size_t**, size_t*,
                       char*, size_t);
  int (*decode)(const NeodbSpmProcessor*, const int*, size_t, char**, size_t*, char*, size_t);
  int (*piece_to_id)(const NeodbSpmProcessor*, const char*, size_t);
  int (*id_to_piece)(const NeodbSpmProcessor*, int, char**, size_t*);
  int (*piece_size)(const NeodbSpmProcessor*);
  int (*unk_id)(const NeodbSpmProcessor*);
  int (*train)(const char* const*, const char* const*, size_t, char*, size_t);
  void (*free)(void*);
};

struct Loaded {
  Api api{};
  std::string error;  // Empty when api is usable.
};

#ifdef NEODB_SPM_STATIC

Loaded Load() {
  Loaded l;
  l.api = Api{&neodb_spm_abi_version, &neodb_spm_processor_load, &neodb_spm_processor_free,
              &neodb_spm_encode_ids,  &neodb_spm_encode_pieces,  &neodb_spm_decode,
              &neodb_spm_piece_to_id, &neodb_spm_id_to_piece,    &neodb_spm_piece_size,
              &neodb_spm_unk_id,      &neodb_spm_train,          &neodb_spm_free};
  return l;
}

#else  // !NEODB_SPM_STATIC

bool FileExists(const std::string& path) { return ::access(path.c_str(), F_OK) == 0; }

// See the lookup order in sentencepiece_adapter.h.
std::string PluginPath() {
  const char* env = std::getenv("NEODB_SPM_PLUGIN");
  if (env != nullptr && env[0] != '\0') return env;
  const std::string baked = NEODB_SPM_PLUGIN_PATH;
  // The installed layout first (<prefix>/bin/neodb, <prefix>/lib/neodb/), so
  // an installed or unpacked neodb uses its own plugin even where a build
  // tree exists; a build-tree binary has neither of these.
  const std::string dir = ExecutableDir();
  if (!dir.empty()) {
    const std::string installed = dir + "/../lib/neodb/" + NEODB_SPM_PLUGIN_NAME;
    if (FileExists(installed)) return installed;
  }
  if (FileExists(baked)) return baked;
  if (!dir.empty()) {
    const std::string beside = dir + "/" + NEODB_SPM_PLUGIN_NAME;
    if (FileExists(beside)) return beside;
  }
  return baked;  // Missing: dlerror names it.
}

std::string DlError() {
  const char* e = ::dlerror();
  return e != nullptr ? e : "unknown dynamic loader error";
}

template <typename F>
bool Resolve(void* handle, const char* name, F* out, std::string* error) {
  ::dlerror();
  void* sym = ::dlsym(handle, name);
  if (sym == nullptr) {
    *error = std::string("missing symbol ") + name + ": " + DlError();
    return false;
  }
  *out = reinterpret_cast<F>(sym);
  return true;
}

Loaded Load() {
  Loaded l;
  const std::string path = PluginPath();
  const std::string prefix = "cannot load the SentencePiece plugin " + path + ": ";
  // A separate link-map namespace: the plugin's libsentencepiece (with its
  // bundled protobuf-lite) and its own libstdc++/libc never meet our
  // libprotobuf. The handle is never closed: tokenizers may live until exit.
  void* handle = ::dlmopen(LM_ID_NEWLM, path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const std::string mopen_error = DlError();
    if (mopen_error.find("static TLS") == std::string::npos) {
      l.error = prefix + mopen_error;
      return l;
    }
    // glibc could not fit the namespace's TLS: fall back to a deep-bound
    // dlopen, where the plugin and libsentencepiece resolve their own
    // symbols (the bundled protobuf-lite) before the global scope's.
    handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
    if (handle == nullptr) {
      l.error = prefix + mopen_error + "; RTLD_DEEPBIND fallback: " + DlError();
      return l;
    }
  }
  Api& a = l.api;
  std::string error;
  const bool ok = Resolve(handle, "neodb_spm_abi_version", &a.abi_version, &error) &&
                  Resolve(handle, "neodb_spm_processor_load", &a.processor_load, &error) &&
                  Resolve(handle, "neodb_spm_processor_free", &a.processor_free, &error) &&
                  Resolve(handle, "neodb_spm_encode_ids", &a.encode_ids, &error) &&
                  Resolve(handle, "neodb_spm_encode_pieces", &a.encode_pieces, &error) &&
                  Resolve(handle, "neodb_spm_decode", &a.decode, &error) &&
                  Resolve(handle, "neodb_spm_piece_to_id", &a.piece_to_id, &error) &&
                  Resolve(handle, "neodb_spm_id_to_piece", &a.id_to_piece, &error) &&
                  Resolve(handle, "neodb_spm_piece_size", &a.piece_size, &error) &&
                  Resolve(handle, "neodb_spm_unk_id", &a.unk_id, &error) &&
                  Resolve(handle, "neodb_spm_train", &a.train, &error) &&
                  Resolve(handle, "neodb_spm_free", &a.free, &error);
  if (!ok) {
    l.error = prefix + error;
    return l;
  }
  if (a.abi_version() != NEODB_SPM_ABI_VERSION) {
    l.error = prefix + "ABI version " + std::to_string(a.abi_version()) + ", expected " +
              std::to_string(NEODB_SPM_ABI_VERSION);
  }
  return l;
}

#endif  // NEODB_SPM_STATIC

// Loaded once, on first use; C++ static initialisation is thread-safe.
const Loaded& Plugin() {
  static const Loaded* const loaded = new Loaded(Load());
  return *loaded;
}

// The api, or null with *r set to the load error.
const Api* GetApi(Result* r) {
  const Loaded& l = Plugin();
  if (!l.error.empty()) {
    *r = Result{kFailedPrecondition, l.error};
    return nullptr;
  }
  return &l.api;
}

Result MakeResult(int code, const char* err) {
  if (code == 0) return {};
  return Result{code, err};
}

Result NotLoaded() { return Result{kFailedPrecondition, "no SentencePiece model is loaded"}; }

}  // namespace

Processor::Processor() = default;

Processor::~Processor() {
  // handle_ is non-null only after Plugin() loaded successfully.
  if (handle_ != nullptr) Plugin().api.processor_free(handle_);
}

Result Processor::LoadFromSerializedProto(std::string_view bytes) {
  Result r;
  const Api* api = GetApi(&r);
  if (api == nullptr) return r;
  char err[kErrLen] = {};
  NeodbSpmProcessor* handle = nullptr;
  const int code = api->processor_load(bytes.data(), bytes.size(), &handle, err, sizeof(err));
  if (code != 0) return MakeResult(code, err);
  if (handle_ != nullptr) api->processor_free(handle_);
  handle_ = handle;
  return {};
}

Result Processor::Encode(std::string_view text, std::vector<int>* ids) const {
  if (handle_ == nullptr) return NotLoaded();
  const Api& api = Plugin().api;
  char err[kErrLen] = {};
  int* out = nullptr;
  size_t n = 0;
  const int code = api.encode_ids(handle_, text.data(), text.size(), &out, &n, err, sizeof(err));
  if (code != 0) return MakeResult(code, err);
  ids->assign(out, out + n);
  api.free(out);
  return {};
}

Result Processor::EncodePieces(std::string_view text, std::vector<std::string>* pieces) const {
  if (handle_ == nullptr) return NotLoaded();
  const Api& api = Plugin().api;
  char err[kErrLen] = {};
  char* data = nullptr;
  size_t* offsets = nullptr;
  size_t count = 0;
  const int code = api.encode_pieces(handle_, text.data(), text.size(), &data, &offsets, &count,
                                     err, sizeof(err));
  if (code != 0) return MakeResult(code, err);
  pieces->clear();
  pieces->reserve(count);
  for (size_t i = 0; i < count; ++i) {
    pieces->emplace_back(data + offsets[i], offsets[i + 1] - offsets[i]);
  }
  api.free(data);
  api.free(offsets);
  return {};
}

Result Processor::Decode(const std::vector<int>& ids, std::string* text) const {
  if (handle_ == nullptr) return NotLoaded();
  const Api& api = Plugin().api;
  char err[kErrLen] = {};
  char* out = nullptr;
  size_t n = 0;
  const int code = api.decode(handle_, ids.data(), ids.size(), &out, &n, err, sizeof(err));
  if (code != 0) return MakeResult(code, err);
  text->assign(out, n);
  api.free(out);
  return {};
}

int Processor::PieceToId(std::string_view piece) const {
  if (handle_ == nullptr) return -1;
  return Plugin().api.piece_to_id(handle_, piece.data(), piece.size());
}

std::string Processor::IdToPiece(int id) const {
  if (handle_ == nullptr) return "";
  const Api& api = Plugin().api;
  char* out = nullptr;
  size_t n = 0;
  if (api.id_to_piece(handle_, id, &out, &n) != 0) return "";
  std::string piece(out, n);
  api.free(out);
  return piece;
}

int Processor::GetPieceSize() const {
  return handle_ == nullptr ? 0 : Plugin().api.piece_size(handle_);
}

int Processor::unk_id() const { return handle_ == nullptr ? -1 : Plugin().api.unk_id(handle_); }

Result Train(const std::unordered_map<std::string, std::string>& args) {
  Result r;
  const Api* api = GetApi(&r);
  if (api == nullptr) return r;
  std::vector<const char*> keys;
  std::vector<const char*> values;
  for (const auto& [k, v] : args) {
    keys.push_back(k.c_str());
    values.push_back(v.c_str());
  }
  char err[kErrLen] = {};
  return MakeResult(api->train(keys.data(), values.data(), keys.size(), err, sizeof(err)), err);
}

}  // namespace neodb::encoder::spm
