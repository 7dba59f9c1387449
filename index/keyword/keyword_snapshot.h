#pragma once
// The keyword snapshot file format (KeywordIndex::Save / Load). One file:
//
//   "NDBKWIX1"                      magic, 8 bytes
//   u32 format_version              kKeywordSnapshotVersion
//   u8  analyzer                    AnalyzerKind
//   f64 k1, f64 b
//   u64 covered_seq                 last change-log sequence reflected
//   u64 documents, u64 terms, u64 postings
//   u64 payload_bytes, u64 payload_checksum
//   u64 header_checksum             Checksum64 of the header after the magic
//   payload (canonical content, also the input of KeywordIndex::Digest):
//     u64 term count, then each term (u64 length + bytes), ascending
//     u64 document count, then per document by ascending id:
//       u64 id, f32 length, u32 term count, then (u32 term index, f32 tf)
//       by ascending term index
//
// Fixed-width fields are little-endian (the host order of every machine we
// build for), as in the vector snapshots. Postings are not stored: Load
// rebuilds them from the per-document lists, which also proves the two agree.
// Writing is atomic (common/atomic_file.h); reading checks magic, version, both checksums,
// sizes, orderings and ranges, and fails with DATA_LOSS rather than load a
// file that is not exactly what Save wrote.

#include <cstdint>

namespace neodb::keyword {

inline constexpr char kKeywordSnapshotMagic[] = "NDBKWIX1";  // 8 bytes, no NUL written
inline constexpr uint32_t kKeywordSnapshotVersion = 1;

}  // namespace neodb::keyword
