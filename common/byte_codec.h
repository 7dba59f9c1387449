#pragma once
// The byte format of every snapshot neodb writes (vector indexes, their
// snapshot files, keyword indexes): fixed-width fields memcpy'd in the host's
// (little-endian) order, strings and vectors length-prefixed, readers
// bounds-checked, and a 64-bit checksum over the bytes. One header so the
// rooms that write snapshots share one format without depending on each other.

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace neodb {

// Word-at-a-time 64-bit checksum (corruption detection, not cryptography).
inline uint64_t Checksum64(std::string_view data) {
  uint64_t h = 0x9e3779b97f4a7c15ull ^ data.size();
  size_t i = 0;
  for (; i + 8 <= data.size(); i += 8) {
    uint64_t w;
    std::memcpy(&w, data.data() + i, 8);
    h = (h ^ w) * 0x100000001b3ull;
    h ^= h >> 29;
  }
  for (; i < data.size(); ++i) h = (h ^ static_cast<uint8_t>(data[i])) * 0x100000001b3ull;
  return h ^ (h >> 32);
}

class ByteWriter {
 public:
  void U8(uint8_t v) { out_.push_back(static_cast<char>(v)); }
  void U32(uint32_t v) { Raw(&v, 4); }
  void U64(uint64_t v) { Raw(&v, 8); }
  void F32(float v) { Raw(&v, 4); }
  void F64(double v) { Raw(&v, 8); }
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
  bool F32(float* v) { return Raw(v, 4); }
  bool F64(double* v) { return Raw(v, 8); }
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
  // A length-prefixed vector; a length the input cannot hold is refused
  // before anything is allocated.
  template <typename T>
  bool Vec(std::vector<T>* v) {
    uint64_t n;
    if (!U64(&n) || n > in_.size() / sizeof(T)) return false;
    v->resize(n);
    return Raw(v->data(), n * sizeof(T));
  }
  std::string_view rest() const { return in_; }
  size_t remaining() const { return in_.size(); }
  bool done() const { return in_.empty(); }

 private:
  std::string_view in_;
};

}  // namespace neodb
