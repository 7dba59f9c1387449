// tokenizer_bench: WordPiece throughput (MB/s, tokens/s) on one thread.
//
// Usage: tokenizer_bench [VOCAB_DIR_OR_VOCAB_TXT] [CORPUS_JSONL]
// Defaults: ../shared/data/bert-base-uncased/vocab.txt and
// ../shared/data/scifact/corpus.jsonl (title + text of every document);
// without the corpus it generates mixed ASCII / accented / CJK text.
#include <sys/utsname.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "encoder/core/file_util.h"
#include "encoder/tokenizer/tokenizer.h"
#include "encoder/tokenizer/wordpiece_tokenizer.h"

namespace {

using neodb::encoder::Tokenizer;

std::string CpuModel() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  }
  return "unknown";
}

std::vector<std::string> LoadCorpus(const std::string& path, std::string* source) {
  std::vector<std::string> docs;
  std::ifstream in(path);
  std::string line;
  while (in && std::getline(in, line)) {
    const auto j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object()) continue;
    std::string doc = j.value("title", "") + " " + j.value("text", "");
    docs.push_back(std::move(doc));
  }
  if (!docs.empty()) {
    *source = path;
    return docs;
  }
  *source = "generated (corpus not found at " + path + ")";
  const std::vector<std::string> words = {
      "the",      "protein", "expression", "Café",       "naïve", "中文字符", "increased",
      "(p<0.05)", "T-cell",  "Ångström",   "signalling", "👍",     "données"};
  std::mt19937 rng(7);
  for (int d = 0; d < 5000; ++d) {
    std::string doc;
    for (int w = 0; w < 200; ++w) doc += words[rng() % words.size()] + " ";
    docs.push_back(std::move(doc));
  }
  return docs;
}

}  // namespace

int main(int argc, char** argv) {
  std::string vocab = argc > 1 ? argv[1] : "../shared/data/bert-base-uncased/vocab.txt";
  const std::string corpus = argc > 2 ? argv[2] : "../shared/data/scifact/corpus.jsonl";
  std::unique_ptr<Tokenizer> tok;
  if (neodb::encoder::IsRegularFile(vocab)) {
    auto contents = neodb::encoder::ReadWholeFile(vocab, size_t{64} << 20);
    if (!contents.ok()) {
      std::fprintf(stderr, "%s\n", std::string(contents.status().message()).c_str());
      return 1;
    }
    auto wp = neodb::encoder::WordPieceTokenizer::FromVocabText(*contents, {}, vocab);
    if (!wp.ok()) {
      std::fprintf(stderr, "%s\n", std::string(wp.status().message()).c_str());
      return 1;
    }
    tok = std::move(wp).value();
  } else {
    auto loaded = neodb::encoder::LoadTokenizer(vocab);
    if (!loaded.ok()) {
      std::fprintf(stderr, "tokenizer_bench: %s\n", std::string(loaded.status().message()).c_str());
      return 1;
    }
    tok = std::move(loaded).value();
  }
  std::string source;
  const std::vector<std::string> docs = LoadCorpus(corpus, &source);
  size_t bytes = 0;
  for (const auto& d : docs) bytes += d.size();

  utsname u{};
  uname(&u);
  std::printf("machine: %s %s, %s\n", u.sysname, u.machine, CpuModel().c_str());
  std::printf("tokenizer: %s (%d tokens), input: %s\n", std::string(tok->kind()).c_str(),
              tok->vocab_size(), source.c_str());
  // CPU seconds (this process) are reported beside wall seconds because the
  // machine may be shared; the rates use CPU time.
  std::printf("%-6s %8s %10s %9s %9s %10s %12s\n", "pass", "MB", "tokens", "wall_s", "cpu_s",
              "MB/cpu_s", "tokens/cpu_s");
  for (int pass = 0; pass < 3; ++pass) {
    size_t tokens = 0;
    const auto start = std::chrono::steady_clock::now();
    const std::clock_t cpu_start = std::clock();
    for (const auto& d : docs) {
      auto ids = tok->Tokenize(d);
      if (!ids.ok()) {
        std::fprintf(stderr, "%s\n", std::string(ids.status().message()).c_str());
        return 1;
      }
      tokens += ids->size();
    }
    const double cpu = static_cast<double>(std::clock() - cpu_start) / CLOCKS_PER_SEC;
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("%-6d %8.2f %10zu %9.3f %9.3f %10.1f %12.0f\n", pass, bytes / 1e6, tokens, wall,
                cpu, bytes / 1e6 / cpu, tokens / cpu);
  }
  return 0;
}
