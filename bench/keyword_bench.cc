// Keyword (BM25) index benchmark: ingest cost per document and single-thread
// query latency (p50, p99) at 100k documents, unfiltered and with a filter
// that admits 10% of the documents. Prints a table and the machine.
//
//   keyword_bench [--docs 100000] [--queries 1000] [--k 10]
//                 [--corpus corpus.jsonl --query-file queries.jsonl]
//
// Default corpus: synthetic, words drawn from a Zipf(1.0) law over a 100k-word
// vocabulary, 100-300 words per document (SciFact abstracts average ~200),
// queries of 3-12 words from the same law. With --corpus, a BEIR corpus is
// replicated (ids made distinct) up to --docs documents and --query-file's
// texts are the queries: real term statistics, real query lengths.

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "index/keyword/fusion.h"
#include "index/keyword/keyword_index.h"
#include "nlohmann/json.hpp"

namespace {

using Clock = std::chrono::steady_clock;
using neodb::keyword::KeywordIndex;

std::string CpuModel() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  }
  return "unknown CPU";
}

double Ms(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

double Percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[std::min(v.size() - 1, static_cast<size_t>(p * (v.size() - 1) + 0.5))];
}

class Zipf {
 public:
  Zipf(size_t n, double s) : cdf_(n) {
    double sum = 0;
    for (size_t i = 0; i < n; ++i) cdf_[i] = sum += 1.0 / std::pow(static_cast<double>(i + 1), s);
    for (double& c : cdf_) c /= sum;
  }
  size_t operator()(std::mt19937_64& rng) {
    double u = std::uniform_real_distribution<double>(0, 1)(rng);
    return std::min(
        cdf_.size() - 1,
        static_cast<size_t>(std::lower_bound(cdf_.begin(), cdf_.end(), u) - cdf_.begin()));
  }

 private:
  std::vector<double> cdf_;
};

std::vector<std::string> Vocabulary(size_t n, std::mt19937_64& rng) {
  std::vector<std::string> words;
  std::uniform_int_distribution<int> len(3, 10), letter('a', 'z');
  for (size_t i = 0; i < n; ++i) {
    std::string w;
    for (int j = len(rng); j > 0; --j) w += static_cast<char>(letter(rng));
    for (size_t x = i; x > 0; x /= 26) w += static_cast<char>('a' + x % 26);  // unique
    words.push_back(w);
  }
  return words;
}

std::string Sentence(const std::vector<std::string>& vocab, Zipf& zipf, int words,
                     std::mt19937_64& rng) {
  std::string s;
  for (int i = 0; i < words; ++i) {
    if (i) s += ' ';
    s += vocab[zipf(rng)];
  }
  return s;
}

std::vector<std::string> ReadJsonlTexts(const std::string& path, bool with_title) {
  std::ifstream in(path);
  if (!in) {
    std::fprintf(stderr, "keyword_bench: cannot open %s\n", path.c_str());
    std::exit(1);
  }
  std::vector<std::string> texts;
  std::string line;
  while (std::getline(in, line)) {
    try {
      auto row = nlohmann::json::parse(line);
      std::string t = row.value("text", "");
      if (with_title && !row.value("title", "").empty()) t = row.value("title", "") + " " + t;
      texts.push_back(std::move(t));
    } catch (const std::exception&) {
      // a blank or malformed line: skipped (a benchmark input, not user data)
    }
  }
  return texts;
}

}  // namespace

int main(int argc, char** argv) {
  int docs = 100000, queries = 1000, k = 10;
  std::string corpus_path, query_path;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string f = argv[i], v = argv[i + 1];
    if (f == "--docs")
      (void)absl::SimpleAtoi(v, &docs);
    else if (f == "--queries")
      (void)absl::SimpleAtoi(v, &queries);
    else if (f == "--k")
      (void)absl::SimpleAtoi(v, &k);
    else if (f == "--corpus")
      corpus_path = v;
    else if (f == "--query-file")
      query_path = v;
    else {
      std::fprintf(stderr, "keyword_bench: unknown flag %s\n", f.c_str());
      return 1;
    }
  }

  std::mt19937_64 rng(1);
  std::vector<std::string> texts, query_texts;
  std::string corpus_name;
  if (!corpus_path.empty()) {
    std::vector<std::string> base = ReadJsonlTexts(corpus_path, true);
    for (int i = 0; i < docs && !base.empty(); ++i) texts.push_back(base[i % base.size()]);
    query_texts = ReadJsonlTexts(query_path, false);
    if (query_texts.size() > static_cast<size_t>(queries)) query_texts.resize(queries);
    corpus_name = "replicated " + corpus_path;
  } else {
    std::vector<std::string> vocab = Vocabulary(100000, rng);
    Zipf zipf(vocab.size(), 1.0);
    std::uniform_int_distribution<int> doc_len(100, 300), query_len(3, 12);
    for (int i = 0; i < docs; ++i) texts.push_back(Sentence(vocab, zipf, doc_len(rng), rng));
    for (int i = 0; i < queries; ++i)
      query_texts.push_back(Sentence(vocab, zipf, query_len(rng), rng));
    corpus_name = "synthetic Zipf(1.0), 100k-word vocabulary";
  }
  size_t bytes = 0;
  for (const auto& t : texts) bytes += t.size();

  auto index = *KeywordIndex::Create({});
  // Ingest: analysis alone, then the full Upsert (analysis + postings).
  auto t0 = Clock::now();
  size_t tokens = 0;
  for (size_t i = 0; i < std::min<size_t>(texts.size(), 10000); ++i) {
    tokens += index->analyzer().Analyze(texts[i]).size();
  }
  const double analyze_us = Ms(t0, Clock::now()) * 1e3 / std::min<size_t>(texts.size(), 10000);
  t0 = Clock::now();
  for (size_t i = 0; i < texts.size(); ++i) {
    absl::Status s = index->Upsert(i, texts[i]);
    if (!s.ok()) {
      std::fprintf(stderr, "keyword_bench: %s\n", s.ToString().c_str());
      return 1;
    }
  }
  const double ingest_ms = Ms(t0, Clock::now());

  auto run = [&](const neodb::keyword::IdFilter& allow, std::vector<double>* lat, size_t* hits) {
    for (const auto& q : query_texts) {
      auto a = Clock::now();
      auto r = index->Search(q, k, allow);
      lat->push_back(Ms(a, Clock::now()));
      *hits += r.ok() ? r->size() : 0;
    }
  };
  std::vector<double> warm, plain, filtered;
  size_t plain_hits = 0, filtered_hits = 0;
  run(nullptr, &warm, &plain_hits);  // warm-up pass
  plain_hits = 0;
  run(nullptr, &plain, &plain_hits);
  run([](uint64_t id) { return id % 10 == 0; }, &filtered, &filtered_hits);

  // The hybrid query's keyword-side cost: the keyword leg at depth 100 and the
  // default (adaptive) fusion with a 100-hit vector leg (random ids here; the
  // vector search itself is index_bench's and the encoder's business).
  std::vector<double> hybrid;
  std::uniform_int_distribution<uint64_t> any_doc(0, texts.size() - 1);
  for (const auto& q : query_texts) {
    std::vector<neodb::keyword::RankedId> vector_leg;
    for (int i = 0; i < 100; ++i) vector_leg.push_back({any_doc(rng), 1.0f - i * 0.005f});
    auto a = Clock::now();
    auto r = index->Search(q, 100);
    std::vector<neodb::keyword::RankedId> keyword_leg;
    if (r.ok()) {
      for (const auto& h : *r) keyword_leg.push_back({h.id, h.score});
    }
    auto fused = neodb::keyword::Fuse(keyword_leg, vector_leg, k, {});
    hybrid.push_back(Ms(a, Clock::now()));
    if (!fused.ok()) return 1;
  }

  // Snapshot: what start-up pays instead of re-analysing every document.
  const std::string snapshot = "/tmp/keyword_bench_" + std::to_string(::getpid()) + ".snap";
  auto s0 = Clock::now();
  if (absl::Status saved = index->Save(snapshot, 1); !saved.ok()) {
    std::fprintf(stderr, "keyword_bench: %s\n", saved.ToString().c_str());
    return 1;
  }
  const double save_ms = Ms(s0, Clock::now());
  std::error_code ec;
  const double snapshot_mb = std::filesystem::file_size(snapshot, ec) / 1e6;
  s0 = Clock::now();
  auto loaded = KeywordIndex::Load(snapshot);
  const double load_ms = Ms(s0, Clock::now());
  std::filesystem::remove(snapshot, ec);
  if (!loaded.ok()) {
    std::fprintf(stderr, "keyword_bench: %s\n", loaded.status().ToString().c_str());
    return 1;
  }

  const auto stats = index->Stats();
  std::printf("# keyword_bench: %s\n", corpus_name.c_str());
  std::printf("# machine: %s, %u hardware threads; benchmark single-threaded\n", CpuModel().c_str(),
              std::thread::hardware_concurrency());
  std::printf("# analyzer english, k1 0.9, b 0.4, k = %d, %zu queries\n", k, query_texts.size());
  std::printf("%-34s %12s\n", "metric", "value");
  std::printf("%-34s %12d\n", "documents", docs);
  std::printf("%-34s %12.0f\n", "mean document bytes", static_cast<double>(bytes) / docs);
  std::printf("%-34s %12llu\n", "distinct terms", static_cast<unsigned long long>(stats.terms));
  std::printf("%-34s %12llu\n", "postings", static_cast<unsigned long long>(stats.postings));
  std::printf("%-34s %12.1f\n", "index memory (MB)", stats.memory_bytes / 1e6);
  std::printf("%-34s %12.1f\n", "analyze only (us/doc)", analyze_us);
  std::printf("%-34s %12.1f\n", "ingest, analyze + index (us/doc)", ingest_ms * 1e3 / docs);
  std::printf("%-34s %12.3f\n", "query p50 (ms)", Percentile(plain, 0.5));
  std::printf("%-34s %12.3f\n", "query p99 (ms)", Percentile(plain, 0.99));
  std::printf("%-34s %12.3f\n", "query mean hits", static_cast<double>(plain_hits) / plain.size());
  std::printf("%-34s %12.3f\n", "filtered 10% query p50 (ms)", Percentile(filtered, 0.5));
  std::printf("%-34s %12.3f\n", "filtered 10% query p99 (ms)", Percentile(filtered, 0.99));
  std::printf("%-34s %12.3f\n", "keyword@100 + fusion p50 (ms)", Percentile(hybrid, 0.5));
  std::printf("%-34s %12.3f\n", "keyword@100 + fusion p99 (ms)", Percentile(hybrid, 0.99));
  std::printf("%-34s %12.1f\n", "snapshot size (MB)", snapshot_mb);
  std::printf("%-34s %12.0f\n", "snapshot save (ms)", save_ms);
  std::printf("%-34s %12.0f\n", "snapshot load (ms)", load_ms);
  std::printf("%-34s %12.3f\n", "filtered mean hits",
              static_cast<double>(filtered_hits) / filtered.size());
  return 0;
}
