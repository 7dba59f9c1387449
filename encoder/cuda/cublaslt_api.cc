#include "encoder/cuda/cublaslt_api.h"

#include <dlfcn.h>

#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

#ifndef NEODB_CUBLASLT_PATH
#define NEODB_CUBLASLT_PATH ""
#endif
#ifndef NEODB_CUBLASLT_SONAME
#define NEODB_CUBLASLT_SONAME "libcublasLt.so"
#endif

namespace neodb::encoder::cuda {
namespace {

std::string LoaderError() {
  const char* e = ::dlerror();
  return e != nullptr ? e : "unknown error";
}

template <typename Fn>
absl::Status Resolve(void* handle, const char* name, const std::string& path, Fn* out) {
  ::dlerror();
  void* sym = ::dlsym(handle, name);
  if (sym == nullptr) {
    return absl::UnavailableError(
        absl::StrCat("cuBLASLt library ", path, " has no ", name, ": ", LoaderError()));
  }
  *out = reinterpret_cast<Fn>(sym);
  return absl::OkStatus();
}

absl::StatusOr<CublasLtApi> ResolveAll(void* handle, const std::string& path) {
  CublasLtApi api;
#define NEODB_RESOLVE(field) \
  RETURN_IF_ERROR(Resolve(handle, "cublasLt" #field, path, &api.field))
  NEODB_RESOLVE(Create);
  NEODB_RESOLVE(Destroy);
  NEODB_RESOLVE(GetStatusName);
  NEODB_RESOLVE(GetStatusString);
  NEODB_RESOLVE(Matmul);
  NEODB_RESOLVE(MatmulAlgoGetHeuristic);
  NEODB_RESOLVE(MatmulDescCreate);
  NEODB_RESOLVE(MatmulDescDestroy);
  NEODB_RESOLVE(MatmulDescSetAttribute);
  NEODB_RESOLVE(MatmulPreferenceCreate);
  NEODB_RESOLVE(MatmulPreferenceDestroy);
  NEODB_RESOLVE(MatmulPreferenceSetAttribute);
  NEODB_RESOLVE(MatrixLayoutCreate);
  NEODB_RESOLVE(MatrixLayoutDestroy);
#undef NEODB_RESOLVE
  return api;
}

// Opens `path` for the life of the process (never closed: the backend's
// handles and plans point into it).
absl::StatusOr<CublasLtApi> Open(const std::string& path) {
  void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    return absl::UnavailableError(
        absl::StrCat("cannot load cuBLASLt (", path, "): ", LoaderError()));
  }
  absl::StatusOr<CublasLtApi> api = ResolveAll(handle, path);
  if (!api.ok()) ::dlclose(handle);
  return api;
}

struct Loaded {
  absl::Status status;
  CublasLtApi api;
};

Loaded LoadOnce() {
  std::vector<std::string> tried;
  for (const std::string& path : {std::string(NEODB_CUBLASLT_PATH),
                                 std::string(NEODB_CUBLASLT_SONAME)}) {
    if (path.empty()) continue;
    absl::StatusOr<CublasLtApi> api = Open(path);
    if (api.ok()) return Loaded{absl::OkStatus(), *api};
    tried.push_back(std::string(api.status().message()));
  }
  return Loaded{absl::UnavailableError(absl::StrCat(
                    "no CUDA: cuBLASLt could not be loaded; tried: ",
                    tried.empty() ? std::string("nothing") : absl::StrJoin(tried, "; "))),
                CublasLtApi{}};
}

const Loaded& Process() {
  static const Loaded* loaded = new Loaded(LoadOnce());
  return *loaded;
}

}  // namespace

absl::StatusOr<const CublasLtApi*> LoadCublasLt() {
  const Loaded& loaded = Process();
  if (!loaded.status.ok()) return loaded.status;
  return &loaded.api;
}

absl::StatusOr<CublasLtApi> LoadCublasLtFrom(const std::string& path) { return Open(path); }

const CublasLtApi& Lt() {
  const Loaded& loaded = Process();
  NEODB_CHECK(loaded.status.ok());
  return loaded.api;
}

}  // namespace neodb::encoder::cuda
