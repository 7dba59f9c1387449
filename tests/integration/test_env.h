#pragma once
// Shared setup of the integration tests: a scratch directory, a model for the
// server (a tiny random NeoBERT from `neodb model init --preset tiny` when the
// build has the encoder, else the server's deterministic fake embedder), and
// document texts drawn from the model's vocabulary.

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tests/integration/server_process.h"

namespace neodb::testing {

inline const std::vector<std::string>& Vocabulary() {
  static const std::vector<std::string> words = {
      "alpha",  "bravo",  "charlie", "delta", "echo",    "foxtrot",  "golf",    "hotel",
      "india",  "juliet", "kilo",    "lima",  "mike",    "november", "oscar",   "papa",
      "quebec", "romeo",  "sierra",  "tango", "uniform", "victor",   "whiskey", "xray",
      "yankee", "zulu",   "red",     "green", "blue",    "river",    "stone",   "cloud",
      "music",  "paper",  "glass",   "light", "north",   "south",    "east",    "west"};
  return words;
}

// A random text of `n` vocabulary words (distinct texts with high probability).
inline std::string RandomText(std::mt19937_64& rng, int n = 8) {
  const auto& w = Vocabulary();
  std::string s;
  for (int i = 0; i < n; ++i) {
    if (i) s += ' ';
    s += w[rng() % w.size()];
  }
  return s;
}

class TestDir {
 public:
  explicit TestDir(const std::string& name)
      : path_(std::filesystem::temp_directory_path() /
              absl::StrCat("neodb_it_", name, "_", getpid())) {
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TestDir() { std::filesystem::remove_all(path_); }
  std::string Sub(const std::string& s) const { return (path_ / s).string(); }

 private:
  std::filesystem::path path_;
};

// Server arguments selecting model number `seed` (different seeds are
// different models). The model lives in dir (created on first use), which is
// also the server's --models-dir, so Reindex may name any model made here.
inline std::vector<std::string> ModelArgs(const TestDir& dir, int seed) {
#ifdef NEODB_HAVE_ENCODER
  const std::string model = dir.Sub(absl::StrCat("model", seed));
  if (!std::filesystem::exists(model)) {
    std::ofstream v(dir.Sub("vocab.txt"));
    for (const char* s : {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"}) v << s << "\n";
    for (const auto& w : Vocabulary()) v << w << "\n";
    for (char c = 'a'; c <= 'z'; ++c) v << c << "\n";
    for (char c = '0'; c <= '9'; ++c) v << c << "\n";
    v.close();
    RunNeodb(absl::StrCat("model init --preset tiny --seed ", seed, " --vocab ",
                          dir.Sub("vocab.txt"), " --out ", model));
  }
  return {"--model", model, "--models-dir", dir.Sub("")};
#else
  // The fake's seed is the last path component; the directory exists so that
  // a Reindex naming it passes the models-directory check.
  std::filesystem::create_directories(dir.Sub(absl::StrCat("fake:", seed)));
  return {"--fake-model", "32", "--model", absl::StrCat("fake:", seed), "--models-dir",
          dir.Sub("")};
#endif
}

// What Reindex's model_dir names for model `seed`.
inline std::string ModelDir(const TestDir& dir, int seed) {
#ifdef NEODB_HAVE_ENCODER
  ModelArgs(dir, seed);
  return dir.Sub(absl::StrCat("model", seed));
#else
  ModelArgs(dir, seed);
  return dir.Sub(absl::StrCat("fake:", seed));
#endif
}

}  // namespace neodb::testing
