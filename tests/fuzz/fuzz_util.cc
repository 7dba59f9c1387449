#include "tests/fuzz/fuzz_util.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace neodb::fuzz {

const std::string& ScratchDir() {
  static const std::string* dir = [] {
    std::string tmpl = (std::filesystem::temp_directory_path() / "neodb_fuzz.XXXXXX").string();
    if (mkdtemp(tmpl.data()) == nullptr) {
      std::perror("mkdtemp");
      std::abort();
    }
    // Removed at exit; a crash leaves it for the post-mortem.
    std::atexit([] {
      std::error_code ec;
      std::filesystem::remove_all(*dir, ec);
    });
    return new std::string(tmpl);
  }();
  return *dir;
}

std::string WriteScratchFile(const std::string& name, std::string_view bytes) {
  std::string path = ScratchDir() + "/" + name;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  FUZZ_CHECK(out.good());
  return path;
}

}  // namespace neodb::fuzz
