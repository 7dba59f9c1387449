#include "index/index_factory.h"

#include <charconv>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/atomic_file.h"
#include "common/status_macros.h"
#include "index/flat_index.h"
#include "index/hnsw_index.h"
#include "index/index_util.h"
#include "index/ivfpq_index.h"

namespace neodb::index {
namespace {

enum class Kind { kFlat, kHnsw, kIvfPq };

struct ParsedSpec {
  Kind kind;
  int a = 0;  // HNSW M, or IVF nlist
  int b = 0;  // PQ m
  HnswParams hnsw;
  int nprobe = 0;
};

// Parses a decimal in [lo, hi] that must be the whole of `s`.
bool ParseInt(std::string_view s, int64_t lo, int64_t hi, int64_t* out) {
  if (s.empty() || s.size() > 10) return false;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
  }
  int64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size() || v < lo || v > hi) return false;
  *out = v;
  return true;
}

bool ParseInt(std::string_view s, int lo, int hi, int* out) {
  int64_t v;
  if (!ParseInt(s, int64_t{lo}, int64_t{hi}, &v)) return false;
  *out = static_cast<int>(v);
  return true;
}

std::vector<std::string_view> SplitCommas(std::string_view s) {
  std::vector<std::string_view> out;
  while (true) {
    size_t comma = s.find(',');
    out.push_back(s.substr(0, comma));
    if (comma == std::string_view::npos) return out;
    s.remove_prefix(comma + 1);
  }
}

absl::StatusOr<ParsedSpec> Parse(std::string_view spec, int dimension) {
  auto bad = [&](std::string_view why) {
    return absl::InvalidArgumentError(absl::StrCat(
        "index spec '", std::string(spec.substr(0, 64)), "': ", std::string(why),
        " (supported: Flat, HNSW<M> with M in 4..128, IVF<nlist>,PQ<m> with m dividing the "
        "dimension; tunables ,efConstruction= ,efSearch= ,exactBelow= for HNSW, ,nprobe= for "
        "IVF)"));
  };
  if (dimension < 1 || dimension > 65536) {
    return absl::InvalidArgumentError(
        absl::StrCat("dimension ", dimension, " is outside 1..65536"));
  }
  std::vector<std::string_view> parts = SplitCommas(spec);
  ParsedSpec p{Kind::kFlat};
  size_t i = 1;
  if (parts[0] == "Flat") {
    p.kind = Kind::kFlat;
  } else if (parts[0].substr(0, 4) == "HNSW") {
    p.kind = Kind::kHnsw;
    if (!ParseInt(parts[0].substr(4), 4, 128, &p.a)) {
      return bad("HNSW needs M in 4..128, e.g. HNSW32");
    }
    if (i < parts.size() && parts[i] == "Flat") ++i;
  } else if (parts[0].substr(0, 3) == "IVF") {
    p.kind = Kind::kIvfPq;
    if (!ParseInt(parts[0].substr(3), 1, 65536, &p.a)) {
      return bad("IVF needs nlist in 1..65536, e.g. IVF256,PQ16");
    }
    if (parts.size() < 2) return bad("IVF needs a ',PQ<m>' part");
    std::string_view pq = parts[1];
    if (pq.substr(0, 2) != "PQ" || !ParseInt(pq.substr(2), 1, 65536, &p.b)) {
      return bad("only IVF<nlist>,PQ<m> is supported after IVF");
    }
    if (p.b > dimension || dimension % p.b != 0) {
      return bad(absl::StrCat("PQ m=", p.b, " must divide the dimension ", dimension));
    }
    i = 2;
  } else {
    return bad("unknown index type");
  }
  for (; i < parts.size(); ++i) {
    std::string_view t = parts[i];
    size_t eq = t.find('=');
    if (eq == std::string_view::npos) return bad(absl::StrCat("unexpected '", std::string(t), "'"));
    std::string_view name = t.substr(0, eq), value = t.substr(eq + 1);
    bool ok = false;
    if (p.kind == Kind::kHnsw && name == "efConstruction") {
      ok = ParseInt(value, 1, 2048, &p.hnsw.ef_construction);
    } else if (p.kind == Kind::kHnsw && name == "efSearch") {
      ok = ParseInt(value, 1, 2048, &p.hnsw.ef_search);
    } else if (p.kind == Kind::kHnsw && name == "exactBelow") {
      ok = ParseInt(value, int64_t{0}, int64_t{1000000000}, &p.hnsw.exact_below);
    } else if (p.kind == Kind::kIvfPq && name == "nprobe") {
      ok = ParseInt(value, 1, 65536, &p.nprobe);
    } else {
      return bad(absl::StrCat("unknown tunable '", std::string(name), "' for this index"));
    }
    if (!ok) return bad(absl::StrCat("bad value for ", std::string(name)));
  }
  return p;
}

}  // namespace

absl::Status ValidateIndexSpec(std::string_view spec, int dimension) {
  return Parse(spec, dimension).status();
}

absl::StatusOr<std::unique_ptr<VectorIndex>> MakeIndex(std::string_view spec, int dimension,
                                                       Metric metric) {
  ASSIGN_OR_RETURN(ParsedSpec p, Parse(spec, dimension));
  std::unique_ptr<VectorIndex> index;
  RETURN_IF_ERROR(CatchExceptions("creating index", [&] {
    switch (p.kind) {
      case Kind::kFlat:
        index = std::make_unique<FlatIndex>(dimension, metric);
        break;
      case Kind::kHnsw:
        index = std::make_unique<HnswIndex>(dimension, p.a, metric, p.hnsw);
        break;
      case Kind::kIvfPq:
        index = std::make_unique<IvfPqIndex>(dimension, p.a, p.b, metric, p.nprobe);
        break;
    }
  }));
  return index;
}

absl::StatusOr<std::unique_ptr<VectorIndex>> DeserializeIndex(std::string_view bytes) {
  ByteReader r(bytes);
  char magic[8];
  std::string spec;
  uint32_t dim;
  uint8_t metric;
  if (!r.Raw(magic, 8) || std::string_view(magic, 8) != std::string_view(kIndexMagic, 8)) {
    return absl::DataLossError("not a neodb index (bad magic)");
  }
  if (!r.Str(&spec) || !r.U32(&dim) || !r.U8(&metric) || metric > 2) {
    return absl::DataLossError("index header is truncated or corrupt");
  }
  auto made = MakeIndex(spec, static_cast<int>(dim), static_cast<Metric>(metric));
  if (!made.ok()) {
    return absl::DataLossError(
        absl::StrCat("index header: ", std::string(made.status().message())));
  }
  std::unique_ptr<VectorIndex> index = std::move(*made);
  absl::Status s;
  if (auto* flat = dynamic_cast<FlatIndex*>(index.get())) {
    s = flat->DeserializeBody(&r);
  } else if (auto* hnsw = dynamic_cast<HnswIndex*>(index.get())) {
    s = hnsw->DeserializeBody(&r);
  } else if (auto* ivf = dynamic_cast<IvfPqIndex*>(index.get())) {
    s = ivf->DeserializeBody(&r);
  }
  RETURN_IF_ERROR(s);
  if (!r.done()) return absl::DataLossError("index payload has trailing bytes");
  return index;
}

absl::StatusOr<std::unique_ptr<VectorIndex>> LoadIndex(const std::string& path, Env* env) {
  absl::StatusOr<std::string> bytes = ReadFileToString(env, path);
  if (absl::IsNotFound(bytes.status())) {
    return absl::NotFoundError(absl::StrCat("cannot open index file ", path));
  }
  RETURN_IF_ERROR(bytes.status());
  return DeserializeIndex(*bytes);
}

absl::Status VectorIndex::Save(const std::string& path) const {
  ASSIGN_OR_RETURN(std::string bytes, Serialize());
  return WriteFileAtomically(Env::Default(), path, {bytes});
}

}  // namespace neodb::index
