// Writes the binary seeds of the snapshot fuzz targets: index payloads and
// snapshot files of small Flat, HNSW and IVF-PQ indexes, and keyword
// snapshots, each prefixed with the mode byte its target reads first. Run
// from the repository root to regenerate tests/fuzz/corpus/{index,keyword}_snapshot:
//   build-fuzz/tests/fuzz/fuzz_write_seeds tests/fuzz/corpus
// (deterministic content; the vector snapshot's file name is not part of it).
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "index/index_factory.h"
#include "index/keyword/keyword_index.h"
#include "index/snapshot.h"

namespace {

namespace fs = std::filesystem;

void Die(const absl::Status& s) {
  std::fprintf(stderr, "fuzz_write_seeds: %s\n", s.ToString().c_str());
  std::exit(1);
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void WriteSeed(const fs::path& path, char mode, std::string_view bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.put(mode);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) Die(absl::UnavailableError("cannot write " + path.string()));
}

void IndexSeeds(const fs::path& out_dir, const fs::path& scratch) {
  struct Case {
    const char* name;
    const char* spec;
    neodb::index::Metric metric;
    int count;
    int dim;
  };
  // IVF-PQ twice: buffered (untrained) and trained, whose payload holds
  // FAISS's IndexIVFPQ (256 vectors train it; dimension 2 and one
  // sub-quantizer keep its codebook, and the seed, small).
  const Case cases[] = {{"flat", "Flat", neodb::index::Metric::kCosine, 6, 4},
                        {"hnsw", "HNSW8", neodb::index::Metric::kL2, 6, 4},
                        {"ivfpq", "IVF1,PQ2", neodb::index::Metric::kInnerProduct, 6, 4},
                        {"ivfpq_trained", "IVF1,PQ1", neodb::index::Metric::kL2, 260, 2}};
  for (const Case& c : cases) {
    const int kDim = c.dim;
    auto index = neodb::index::MakeIndex(c.spec, kDim, c.metric);
    if (!index.ok()) Die(index.status());
    std::vector<int64_t> ids;
    std::vector<float> vectors;
    for (int i = 0; i < c.count; ++i) {
      ids.push_back(10 + i);
      for (int d = 0; d < kDim; ++d) vectors.push_back(0.25f * ((i * 3 + d) % 17) + 0.1f);
    }
    if (absl::Status s = (*index)->Add(ids, vectors); !s.ok()) Die(s);
    if (auto removed = (*index)->Remove(std::vector<int64_t>{11}); !removed.ok()) {
      Die(removed.status());
    }
    auto payload = (*index)->Serialize();
    if (!payload.ok()) Die(payload.status());
    WriteSeed(out_dir / (std::string(c.name) + "_payload"), 0, *payload);
    const fs::path dir = scratch / c.name;
    auto path = neodb::index::WriteSnapshot(dir.string(), **index, 7, "model-a", 1);
    if (!path.ok()) Die(path.status());
    WriteSeed(out_dir / (std::string(c.name) + "_file"), 1, ReadFile(*path));
  }
}

void KeywordSeeds(const fs::path& out_dir, const fs::path& scratch) {
  auto index = neodb::keyword::KeywordIndex::Create({});
  if (!index.ok()) Die(index.status());
  const char* docs[] = {"The quick brown fox jumps over the lazy dog",
                        "Vector search with keyword fusion", "caf\xc3\xa9 na\xc3\xafve \xe4\xb8\xad\xe6\x96\x87"};
  for (uint64_t i = 0; i < std::size(docs); ++i) {
    if (absl::Status s = (*index)->Upsert(100 + i, docs[i]); !s.ok()) Die(s);
  }
  const std::string path = (scratch / "keyword.snap").string();
  if (absl::Status s = (*index)->Save(path, 42); !s.ok()) Die(s);
  const std::string file = ReadFile(path);
  WriteSeed(out_dir / "file", 0, file);
  // The checksummed form (keyword_snapshot_fuzz.cc): the file without its
  // magic, payload size and checksums.
  constexpr size_t kFields = 4 + 1 + 8 + 8 + 8 * 4;
  WriteSeed(out_dir / "fields_and_payload", 1,
            file.substr(8, kFields) + file.substr(8 + kFields + 24));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: fuzz_write_seeds <corpus dir>\n");
    return 2;
  }
  const fs::path corpus = argv[1];
  const fs::path scratch = fs::temp_directory_path() / "neodb_fuzz_seeds";
  fs::remove_all(scratch);
  fs::create_directories(corpus / "index_snapshot");
  fs::create_directories(corpus / "keyword_snapshot");
  IndexSeeds(corpus / "index_snapshot", scratch);
  KeywordSeeds(corpus / "keyword_snapshot", scratch);
  fs::remove_all(scratch);
  return 0;
}
