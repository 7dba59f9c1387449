#include "index/faiss_io.h"

#include <faiss/Index.h>
#include <faiss/impl/io.h>
#include <faiss/index_io.h>

#include "common/status_macros.h"

namespace neodb::index {

absl::Status WriteFaissIndex(const faiss::Index& index, std::string_view what, ByteWriter* w) {
  faiss::VectorIOWriter faiss_bytes;
  RETURN_IF_ERROR(CatchExceptions(what, [&] { faiss::write_index(&index, &faiss_bytes); }));
  w->Str(std::string_view(reinterpret_cast<const char*>(faiss_bytes.data.data()),
                          faiss_bytes.data.size()));
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<faiss::Index>> ReadFaissIndex(const std::string& bytes,
                                                             std::string_view what) {
  std::unique_ptr<faiss::Index> loaded;
  RETURN_IF_ERROR(CatchExceptions(what, [&] {
    faiss::VectorIOReader reader;
    reader.data.assign(bytes.begin(), bytes.end());
    loaded.reset(faiss::read_index(&reader));
  }));
  return loaded;
}

}  // namespace neodb::index
