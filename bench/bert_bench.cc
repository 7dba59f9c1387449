// bert_bench: forward-pass throughput of a real checkpoint (any architecture
// Encoder::Open reads: BERT, MiniLM, BGE, E5, NeoBERT) through the public
// facade, at a list of sequence lengths and CPU precisions, against the
// host's register peaks measured in the same run (bench/peak.h). The peer
// runtimes' side is bench/bert_peers.py, which runs this binary and reads
// the file --out writes.
//
//   bert_bench --model DIR [--threads 1] [--tokens 4096] [--warmup 1] [--reps 7]
//              [--lengths 32,128,512] [--precisions f32,bf16,int8]
//              [--probe 8] [--out FILE]
//
// Every timed pass is one EmbedIds call over max(1, tokens / L) sequences of
// exactly L tokens, [CLS] + L − 2 ids + [SEP] (pooling: the model
// directory's; not normalised). The ids come from a fixed formula that
// bert_peers.py repeats (BenchId below): id(s, t) = lo + splitmix64(s·1000003
// + t) mod (vocab − lo), lo = min(1000, vocab / 4), which keeps BERT's
// [unused]/special rows out. L may exceed the directory's max_seq_length up
// to the model's own positions (EmbedIds checks the model's limit).
// Reported per row: the median over --reps passes of wall and process-CPU
// seconds, as tokens/s; GFLOP per CPU-second (2·T·C·(4C + 2I) per BERT layer,
// 2·T·C·(4C + 3F) per NeoBERT layer, plus 4·T·L·C attention, whatever the
// precision) and its fraction of the precision's best register peak.
// --out writes JSON lines: one {"kind":"time",…} per row and one
// {"kind":"probe",…} per row with the ids and the pooled F32 vectors of the
// first --probe sequences of that length.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/peak.h"
#include "encoder/encoder.h"
#include "encoder/ops/cpu_kernels.h"

namespace neodb::encoder {
namespace {

using Clock = std::chrono::steady_clock;

double CpuNow() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

struct Args {
  std::string model;
  int threads = 1;
  int64_t tokens = 4096;
  int warmup = 1;
  int reps = 7;
  int probe = 8;
  std::string out;
  std::vector<int64_t> lengths = {32, 128, 512};
  std::vector<Precision> precisions = {Precision::kF32, Precision::kBf16, Precision::kInt8};
};

std::vector<std::string> SplitCommas(const std::string& s) {
  std::vector<std::string> out;
  for (size_t start = 0; start <= s.size();) {
    size_t end = s.find(',', start);
    if (end == std::string::npos) end = s.size();
    out.push_back(s.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

// The inner token id at position t (0-based, after [CLS]) of sequence s.
int32_t BenchId(int64_t s, int64_t t, int64_t vocab) {
  const int64_t lo = std::min<int64_t>(1000, vocab / 4);
  uint64_t z = static_cast<uint64_t>(s) * 1000003u + static_cast<uint64_t>(t);
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  z ^= z >> 31;
  return static_cast<int32_t>(lo + static_cast<int64_t>(z % static_cast<uint64_t>(vocab - lo)));
}

std::vector<std::vector<int32_t>> Batch(int64_t seqs, int64_t len, const SpecialTokens& sp,
                                        int64_t vocab) {
  std::vector<std::vector<int32_t>> out(seqs);
  for (int64_t s = 0; s < seqs; ++s) {
    out[s].push_back(sp.cls);
    for (int64_t t = 0; t + 2 < len; ++t) out[s].push_back(BenchId(s, t, vocab));
    out[s].push_back(sp.sep);
  }
  return out;
}

std::string CpuModel() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  }
  return "unknown";
}

// Intermediate (FFN) width from config.json, for the FLOP count only.
int64_t IntermediateSize(const std::string& dir) {
  std::ifstream in(dir + "/config.json");
  const nlohmann::json cfg = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (cfg.is_object() && cfg.contains("intermediate_size") &&
      cfg["intermediate_size"].is_number_integer()) {
    return cfg["intermediate_size"].get<int64_t>();
  }
  return 0;
}

bool ParseArgs(int argc, char** argv, Args* args) {
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i];
    const std::string v = argv[i + 1];
    if (k == "--model") {
      args->model = v;
    } else if (k == "--threads") {
      args->threads = std::atoi(v.c_str());
    } else if (k == "--tokens") {
      args->tokens = std::atoll(v.c_str());
    } else if (k == "--warmup") {
      args->warmup = std::atoi(v.c_str());
    } else if (k == "--reps") {
      args->reps = std::max(1, std::atoi(v.c_str()));
    } else if (k == "--probe") {
      args->probe = std::atoi(v.c_str());
    } else if (k == "--out") {
      args->out = v;
    } else if (k == "--lengths") {
      args->lengths.clear();
      for (const std::string& s : SplitCommas(v)) args->lengths.push_back(std::atoll(s.c_str()));
    } else if (k == "--precisions") {
      args->precisions.clear();
      for (const std::string& s : SplitCommas(v)) {
        auto p = ParsePrecision(s);
        if (!p.ok()) {
          std::fprintf(stderr, "%s\n", std::string(p.status().message()).c_str());
          return false;
        }
        args->precisions.push_back(*p);
      }
    } else {
      std::fprintf(stderr, "unknown flag %s\n", k.c_str());
      return false;
    }
  }
  if (args->model.empty()) {
    std::fprintf(stderr, "--model DIR is required\n");
    return false;
  }
  return true;
}

int Main(int argc, char** argv) {
  Args args;
  if (!ParseArgs(argc, argv, &args)) return 2;
  std::ofstream out;
  if (!args.out.empty()) {
    out.open(args.out);
    if (!out) {
      std::fprintf(stderr, "cannot write %s\n", args.out.c_str());
      return 1;
    }
  }
  std::printf("cpu: %s | %s | threads %d\n", CpuModel().c_str(), CpuKernelInfo().c_str(),
              args.threads);
  const std::vector<bench::PeakRow> peaks = bench::RegisterPeaks();
  std::printf("register peaks (per CPU-second, 1 thread):");
  for (const auto& r : peaks) {
    if (r.gflops >= 0) std::printf(" | %s %.1f", r.name.c_str(), r.gflops);
  }
  std::printf("\n");

  const int64_t ffn = IntermediateSize(args.model);
  bool header = false;
  for (Precision precision : args.precisions) {
    EncoderOptions options;
    options.backend.num_threads = args.threads;
    options.backend.precision = precision;
    options.max_batch_tokens = std::max<int64_t>(options.max_batch_tokens, args.tokens);
    auto opened = Encoder::Open(args.model, options);
    if (!opened.ok()) {
      std::fprintf(stderr, "%s\n", std::string(opened.status().message()).c_str());
      return 1;
    }
    Encoder& enc = **opened;
    const std::string name(PrecisionName(precision));
    if (!header) {
      std::printf(
          "model: %s (%s), hidden %lld, layers %lld, ffn %lld, vocab %lld, positions %lld, "
          "max_length %lld, pooling %s; %d warm-up + median of %d passes\n\n",
          args.model.c_str(), std::string(ArchitectureName(enc.architecture())).c_str(),
          static_cast<long long>(enc.dim()), static_cast<long long>(enc.model().num_layers()),
          static_cast<long long>(ffn), static_cast<long long>(enc.vocab_size()),
          static_cast<long long>(enc.model().max_length()),
          static_cast<long long>(enc.max_length()),
          enc.defaults().pooling == Pooling::kMean ? "mean" : "cls", args.warmup, args.reps);
      std::printf(
          "| precision | seq len | seqs/pass | tokens/pass | tokens/s (wall) | tokens/cpu-s | "
          "GFLOP/cpu-s | peak GFLOP/s | of peak |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
      header = true;
    }
    if (enc.precision() != precision) {
      std::printf("| %s | n/a: %s |\n", name.c_str(), enc.precision_note().c_str());
      continue;
    }
    const double c = static_cast<double>(enc.dim());
    const double per_layer_gemm = enc.architecture() == Architecture::kBert
                                      ? 4 * c + 2.0 * static_cast<double>(ffn)
                                      : 4 * c + 3.0 * static_cast<double>(ffn);
    const double peak = bench::BestPeak(peaks, name) * args.threads;
    const Pooling pooling = enc.defaults().pooling;
    for (int64_t len : args.lengths) {
      const int64_t seqs = std::max<int64_t>(1, args.tokens / len);
      const auto batch = Batch(seqs, len, enc.tokenizer().special(), enc.vocab_size());
      const double tokens = static_cast<double>(seqs * len);
      const double flops = static_cast<double>(enc.model().num_layers()) *
                           (2 * tokens * c * per_layer_gemm + 4.0 * tokens * len * c);
      for (int w = 0; w < args.warmup; ++w) {
        auto r = enc.EmbedIds(batch, pooling, /*normalize=*/false);
        if (!r.ok()) {
          std::fprintf(stderr, "%s\n", std::string(r.status().message()).c_str());
          return 1;
        }
      }
      std::vector<double> walls, cpus;
      for (int r = 0; r < args.reps; ++r) {
        const Clock::time_point w0 = Clock::now();
        const double c0 = CpuNow();
        auto v = enc.EmbedIds(batch, pooling, /*normalize=*/false);
        cpus.push_back(CpuNow() - c0);
        walls.push_back(std::chrono::duration<double>(Clock::now() - w0).count());
        if (!v.ok()) return 1;
      }
      const double wall = Median(walls), cpu = Median(cpus);
      const double gflops = flops / cpu / 1e9;
      std::printf("| %s | %lld | %lld | %.0f | %.0f | %.0f | %.1f | %.1f | %.0f%% |\n",
                  name.c_str(), static_cast<long long>(len), static_cast<long long>(seqs), tokens,
                  tokens / wall, tokens / cpu, gflops, peak, peak > 0 ? 100 * gflops / peak : 0.0);
      std::fflush(stdout);
      if (!out) continue;
      out << nlohmann::json{{"kind", "time"},       {"precision", name},
                            {"length", len},        {"seqs", seqs},
                            {"tokens", tokens},     {"wall_s", walls},
                            {"cpu_s", cpus},        {"tokens_per_s", tokens / wall},
                            {"tokens_per_cpu_s", tokens / cpu}}
                 .dump()
          << "\n";
      const std::vector<std::vector<int32_t>> probe(
          batch.begin(), batch.begin() + std::min<int64_t>(args.probe, seqs));
      auto v = enc.EmbedIds(probe, pooling, /*normalize=*/false);
      if (!v.ok()) return 1;
      std::vector<std::vector<float>> vectors(probe.size());
      for (size_t b = 0; b < probe.size(); ++b) {
        const float* row = v->data<float>() + b * enc.dim();
        vectors[b].assign(row, row + enc.dim());
      }
      out << nlohmann::json{{"kind", "probe"}, {"precision", name}, {"length", len},
                            {"ids", probe},    {"vectors", vectors}}
                 .dump()
          << "\n";
      out.flush();
    }
  }
  return 0;
}

}  // namespace
}  // namespace neodb::encoder

int main(int argc, char** argv) { return neodb::encoder::Main(argc, argv); }
