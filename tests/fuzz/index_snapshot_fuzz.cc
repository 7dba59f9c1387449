// Fuzzes the vector index snapshot loader. First byte even: the rest is an
// index payload for DeserializeIndex (Flat, HNSW or IVF-PQ; the part behind
// the snapshot checksums, which random corruption never reaches but a crafted
// file does). Odd: the rest is a whole snapshot file for ReadLatestSnapshot.
// Oracle (snapshot.h, index_factory.h): a loaded index is consistent (Ids()
// has size() live ids), can be searched, and serialises to bytes that load
// back to the same index.
#include <filesystem>
#include <vector>

#include <sanitizer/lsan_interface.h>

#include "index/index_factory.h"
#include "index/snapshot.h"
#include "spdlog/spdlog.h"
#include "tests/fuzz/fuzz_util.h"

using neodb::index::VectorIndex;

namespace {

// Loading runs with LeakSanitizer off. In this clang build the FAISS index
// that faiss::read_index returns (from Debian's gcc-built libfaiss.a) is
// reported leaked although HnswIndex owns and deletes it; the gcc build of
// the same code frees everything (checked with valgrind on the seeds, see
// README.md). Everything else, searches and re-serialisation included, is
// still leak-checked.
template <typename F>
auto WithoutLeakChecks(F f) {
  __lsan_disable();
  auto result = f();
  __lsan_enable();
  return result;
}

// Larger dimensions are valid but make each run allocate megabytes of query.
constexpr int kMaxSearchedDimension = 4096;

void CheckLoaded(const VectorIndex& index) {
  const std::vector<int64_t> ids = index.Ids();
  FUZZ_CHECK(ids.size() == index.size());
  for (int64_t id : ids) FUZZ_CHECK(index.Contains(id));
  (void)index.DebugString();
  if (index.dimension() >= 1 && index.dimension() <= kMaxSearchedDimension) {
    std::vector<float> query(index.dimension(), 0.5f);
    auto hits = index.Search(query, 5);
    FUZZ_CHECK(hits.ok() && hits->size() == 1);
    for (const auto& hit : (*hits)[0]) FUZZ_CHECK(index.Contains(hit.id));
  }
  absl::StatusOr<std::string> bytes = index.Serialize();
  FUZZ_CHECK(bytes.ok());
  absl::StatusOr<std::unique_ptr<VectorIndex>> again =
      WithoutLeakChecks([&] { return neodb::index::DeserializeIndex(*bytes); });
  FUZZ_CHECK(again.ok());
  FUZZ_CHECK((*again)->spec() == index.spec() && (*again)->dimension() == index.dimension());
  FUZZ_CHECK((*again)->Ids() == ids);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const bool quiet = [] {
    spdlog::set_level(spdlog::level::off);  // ReadLatestSnapshot logs every skipped file
    return true;
  }();
  (void)quiet;
  if (size == 0) return 0;
  const std::string_view rest = neodb::fuzz::AsView(data + 1, size - 1);
  if ((data[0] & 1) == 0) {
    absl::StatusOr<std::unique_ptr<VectorIndex>> index =
        WithoutLeakChecks([&] { return neodb::index::DeserializeIndex(rest); });
    if (index.ok()) CheckLoaded(**index);
    return 0;
  }
  const std::string dir = neodb::fuzz::ScratchDir() + "/snapshots";
  std::filesystem::create_directories(dir);
  neodb::fuzz::WriteScratchFile("snapshots/snapshot-00000000000000000001-0000000000000001.nsnap",
                                rest);
  absl::StatusOr<neodb::index::LoadedSnapshot> loaded =
      WithoutLeakChecks([&] { return neodb::index::ReadLatestSnapshot(dir); });
  if (loaded.ok()) {
    FUZZ_CHECK(loaded->index->size() == loaded->manifest.count);
    CheckLoaded(*loaded->index);
  }
  return 0;
}
