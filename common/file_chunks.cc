#include "common/file_chunks.h"

#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace neodb {

absl::Status ForEachFileChunk(Env* env, const std::string& path, size_t chunk_bytes,
                              absl::FunctionRef<void(std::string_view)> fn) {
  NEODB_CHECK(chunk_bytes > 0);
  absl::StatusOr<std::unique_ptr<SequentialFile>> in = env->NewSequentialFile(path);
  if (absl::IsNotFound(in.status())) return absl::NotFoundError(absl::StrCat("cannot read ", path));
  RETURN_IF_ERROR(in.status());
  std::vector<char> buf(chunk_bytes);
  for (;;) {
    absl::StatusOr<size_t> n = (*in)->Read(buf.size(), buf.data());
    if (!n.ok()) {
      return absl::DataLossError(absl::StrCat("error reading ", path, ": ", n.status().message()));
    }
    if (*n == 0) return absl::OkStatus();
    fn(std::string_view(buf.data(), *n));
  }
}

}  // namespace neodb
