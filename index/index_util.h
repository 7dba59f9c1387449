#pragma once
// Internal to index/: argument checks shared by every VectorIndex, the FAISS
// exception adapter and a bounds-checked byte reader/writer for Serialize.

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <exception>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "index/metric.h"

namespace neodb::index {

inline constexpr int kMaxK = 10000;
inline constexpr char kIndexMagic[] = "NDBVIDX1";  // 8 bytes, no NUL written

// INVALID_ARGUMENT unless vectors.size() == ids.size() * dim, ids are
// non-negative and distinct within the call, and every value is finite.
absl::Status ValidateAddArgs(std::span<const int64_t> ids, std::span<const float> vectors, int dim);
// INVALID_ARGUMENT unless 1 <= k <= kMaxK and queries.size() is a multiple of dim.
absl::Status ValidateSearchArgs(std::span<const float> queries, int k, int dim);

// The ids held by `ids`, ascending (VectorIndex::Ids). `ids` is a container of
// int64_t ids, or a map keyed by id.
template <typename Container>
std::vector<int64_t> SortedIds(const Container& ids) {
  std::vector<int64_t> out;
  out.reserve(ids.size());
  for (const auto& e : ids) {
    if constexpr (std::is_same_v<std::decay_t<decltype(e)>, int64_t>) {
      out.push_back(e);
    } else {
      out.push_back(e.first);
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

// Runs `fn`, turning any exception (FAISS throws faiss::FaissException, the
// standard library std::bad_alloc) into INTERNAL / RESOURCE_EXHAUSTED.
template <typename Fn>
absl::Status CatchExceptions(std::string_view what, Fn&& fn) {
  try {
    fn();
    return absl::OkStatus();
  } catch (const std::bad_alloc&) {
    return absl::ResourceExhaustedError(std::string(what) + ": out of memory");
  } catch (const std::exception& e) {
    return absl::InternalError(std::string(what) + ": " + e.what());
  } catch (...) {
    return absl::InternalError(std::string(what) + ": unknown exception");
  }
}

class ByteWriter {
 public:
  void U8(uint8_t v) { out_.push_back(static_cast<char>(v)); }
  void U32(uint32_t v) { Raw(&v, 4); }
  void U64(uint64_t v) { Raw(&v, 8); }
  void Str(std::string_view s) {
    U64(s.size());
    out_.append(s);
  }
  void Raw(const void* p, size_t n) { out_.append(static_cast<const char*>(p), n); }
  template <typename T>
  void Vec(const std::vector<T>& v) {
    U64(v.size());
    Raw(v.data(), v.size() * sizeof(T));
  }
  std::string& out() { return out_; }

 private:
  std::string out_;
};

// Every getter returns false (and reads nothing) when the input is too short.
class ByteReader {
 public:
  explicit ByteReader(std::string_view in) : in_(in) {}
  bool U8(uint8_t* v) { return Raw(v, 1); }
  bool U32(uint32_t* v) { return Raw(v, 4); }
  bool U64(uint64_t* v) { return Raw(v, 8); }
  bool Str(std::string* s) {
    uint64_t n;
    if (!U64(&n) || n > in_.size()) return false;
    s->assign(in_.data(), n);
    in_.remove_prefix(n);
    return true;
  }
  bool Raw(void* p, size_t n) {
    if (n > in_.size()) return false;
    if (n == 0) return true;  // dst may be null (empty vector)
    std::memcpy(p, in_.data(), n);
    in_.remove_prefix(n);
    return true;
  }
  template <typename T>
  bool Vec(std::vector<T>* v) {
    uint64_t n;
    if (!U64(&n) || n > in_.size() / sizeof(T)) return false;
    v->resize(n);
    return Raw(v->data(), n * sizeof(T));
  }
  std::string_view rest() const { return in_; }
  bool done() const { return in_.empty(); }

 private:
  std::string_view in_;
};

// Header shared by every serialised index: magic, spec, dimension, metric.
void WriteIndexHeader(ByteWriter* w, std::string_view spec, int dim, Metric metric);

}  // namespace neodb::index
