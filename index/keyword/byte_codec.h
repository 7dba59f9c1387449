#pragma once
// Little-endian-host byte writer/reader and a 64-bit checksum for keyword
// snapshots. The same conventions as index/index_util.h and index/snapshot.cc
// (which this room may not depend on): fixed-width fields memcpy'd, strings
// length-prefixed, readers bounds-checked and returning false when short.

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace neodb::keyword {

// Word-at-a-time 64-bit checksum (corruption detection, not cryptography);
// the function index/snapshot.cc uses for vector snapshots.
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
    if (n == 0) return true;
    std::memcpy(p, in_.data(), n);
    in_.remove_prefix(n);
    return true;
  }
  std::string_view rest() const { return in_; }
  size_t remaining() const { return in_.size(); }

 private:
  std::string_view in_;
};

}  // namespace neodb::keyword
