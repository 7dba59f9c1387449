#pragma once
// Internal to index/: FAISS's own index format embedded in our snapshot payload
// (one ByteWriter::Str), shared by HnswIndex and IvfPqIndex. The bytes are
// exactly faiss::write_index's, so snapshot formats do not depend on this helper.

#include <memory>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "index/index_util.h"

namespace faiss {
struct Index;
}

namespace neodb::index {

// Appends `index` in FAISS format to `w` as one length-prefixed string. On
// error (`what` names the operation in the message) nothing is appended.
// REQUIRES: the caller keeps `index` from changing (holds its index's lock).
absl::Status WriteFaissIndex(const faiss::Index& index, std::string_view what, ByteWriter* w);

// Parses FAISS-format `bytes`; a FAISS exception becomes an error naming `what`.
// The caller checks the returned index's type and shape against its header.
absl::StatusOr<std::unique_ptr<faiss::Index>> ReadFaissIndex(const std::string& bytes,
                                                             std::string_view what);

}  // namespace neodb::index
