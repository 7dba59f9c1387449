#pragma once
// Helpers for tokenizer tests: scratch directories and files.

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <string_view>

namespace neodb::encoder::testing {

// A fresh directory under the system temp dir, removed on destruction.
class ScratchDir {
 public:
  ScratchDir() {
    std::random_device rd;
    const auto base = std::filesystem::temp_directory_path();
    for (;;) {
      path_ = (base / ("neodb_tok_" + std::to_string(rd()) + std::to_string(rd()))).string();
      if (std::filesystem::create_directory(path_)) break;
    }
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  const std::string& path() const { return path_; }
  std::string File(std::string_view name) const { return path_ + "/" + std::string(name); }

  void Write(std::string_view name, std::string_view contents) const {
    std::ofstream out(File(name), std::ios::binary | std::ios::trunc);
    ASSERT_TRUE(out) << "cannot create " << File(name);
    out.write(contents.data(), static_cast<std::streamsize>(contents.size()));
  }

 private:
  std::string path_;
};

}  // namespace neodb::encoder::testing
