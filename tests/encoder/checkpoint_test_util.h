#pragma once
// Helpers for the checkpoint tests: a self-removing temporary directory and
// raw file I/O for hand-built (often malformed) files.

#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace neodb::encoder::testing {

class TempDir {
 public:
  TempDir() {
    const char* base = std::getenv("TMPDIR");
    std::string tmpl = std::string(base != nullptr && *base ? base : "/tmp") + "/neodb_ckpt_XXXXXX";
    if (mkdtemp(tmpl.data()) == nullptr) std::abort();
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  std::string Sub(const std::string& name) const { return path_ + "/" + name; }
  // A fresh subdirectory.
  std::string MakeDir(const std::string& name) const {
    std::filesystem::create_directories(Sub(name));
    return Sub(name);
  }

 private:
  std::string path_;
};

inline void WriteBytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

inline std::string ReadBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// 8-byte little-endian length + header + data, the safetensors layout.
inline std::string SafetensorsBytes(const std::string& header, const std::string& data,
                                    uint64_t header_len) {
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>((header_len >> (8 * i)) & 0xff);
  return out + header + data;
}
inline std::string SafetensorsBytes(const std::string& header, const std::string& data) {
  return SafetensorsBytes(header, data, header.size());
}

}  // namespace neodb::encoder::testing
