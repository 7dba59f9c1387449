// keyword_eval: indexes a BEIR dataset with neodb::keyword, runs the split's
// queries and writes a run file (`query-id doc-id score`, top --depth per
// query) that research/corpus/beir_eval.py scores. With --dense-run it also fuses
// the BM25 leg with a vector leg read from a run file (e.g. one written by
// `beir_eval.py dense`), through the same fusion code the engine uses.
//
//   keyword_eval DATASET_DIR --run-out RUN.tsv [--split test]
//       [--analyzer english|simple|none] [--k1 0.9] [--b 0.4]
//       [--title-weight W]   (default: title and text as one text, as
//                             beir_eval.py does; W > 0: title a field of weight W)
//       [--depth 100]
//       [--dense-run RUN.tsv --fusion adaptive|weighted|rrf [--alpha A]
//        [--max-alpha A] [--agreement-depth D]]
//       [--snapshot PATH]    (save, reload, and query the reloaded index)

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/numbers.h"
#include "index/keyword/fusion.h"
#include "index/keyword/keyword_index.h"
#include "research/keyword_eval/beir_dataset.h"

namespace {

using neodb::keyword::FieldText;
using neodb::keyword::KeywordIndex;

[[noreturn]] void Fail(const std::string& message) {
  std::fprintf(stderr, "keyword_eval: %s\n", message.c_str());
  std::exit(1);
}

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(p * (v.size() - 1) + 0.5))];
}

struct Args {
  std::string dataset, run_out, split = "test", dense_run, snapshot;
  std::string analyzer = "english", fusion = "adaptive";
  double k1 = 0.9, b = 0.4, title_weight = 0, alpha = 0.5, max_alpha = 0.5;
  int depth = 100, agreement_depth = neodb::keyword::kDefaultAgreementDepth;
};

Args ParseArgs(int argc, char** argv) {
  Args a;
  auto number = [&](int& i) {
    double v;
    if (i + 1 >= argc || !absl::SimpleAtod(argv[i + 1], &v))
      Fail(std::string(argv[i]) + " needs a number");
    ++i;
    return v;
  };
  auto text = [&](int& i) {
    if (i + 1 >= argc) Fail(std::string(argv[i]) + " needs a value");
    return std::string(argv[++i]);
  };
  for (int i = 1; i < argc; ++i) {
    std::string f = argv[i];
    if (f == "--run-out")
      a.run_out = text(i);
    else if (f == "--split")
      a.split = text(i);
    else if (f == "--analyzer")
      a.analyzer = text(i);
    else if (f == "--dense-run")
      a.dense_run = text(i);
    else if (f == "--fusion")
      a.fusion = text(i);
    else if (f == "--snapshot")
      a.snapshot = text(i);
    else if (f == "--k1")
      a.k1 = number(i);
    else if (f == "--b")
      a.b = number(i);
    else if (f == "--title-weight")
      a.title_weight = number(i);
    else if (f == "--alpha")
      a.alpha = number(i);
    else if (f == "--max-alpha")
      a.max_alpha = number(i);
    else if (f == "--depth")
      a.depth = static_cast<int>(number(i));
    else if (f == "--agreement-depth")
      a.agreement_depth = static_cast<int>(number(i));
    else if (!f.empty() && f[0] != '-' && a.dataset.empty())
      a.dataset = f;
    else
      Fail("unknown argument " + f + " (see the comment at the top of keyword_eval.cc)");
  }
  if (a.dataset.empty() || a.run_out.empty())
    Fail("usage: keyword_eval DATASET_DIR --run-out RUN.tsv [...]");
  return a;
}

}  // namespace

int main(int argc, char** argv) {
  const Args args = ParseArgs(argc, argv);
  auto data = neodb::tools::LoadBeirDataset(args.dataset, args.split);
  if (!data.ok()) Fail(data.status().ToString());
  auto kind = neodb::keyword::ParseAnalyzerKind(args.analyzer);
  if (!kind.ok()) Fail(kind.status().ToString());
  auto created = KeywordIndex::Create({*kind, args.k1, args.b});
  if (!created.ok()) Fail(created.status().ToString());
  std::unique_ptr<KeywordIndex> index = std::move(*created);

  auto t0 = std::chrono::steady_clock::now();
  absl::flat_hash_map<std::string, uint64_t> internal_id;
  for (uint64_t i = 0; i < data->corpus.size(); ++i) {
    const auto& doc = data->corpus[i];
    internal_id[doc.id] = i;
    absl::Status s;
    if (args.title_weight > 0) {
      std::vector<FieldText> fields = {{doc.text, 1.0f},
                                       {doc.title, static_cast<float>(args.title_weight)}};
      s = index->Upsert(i, fields);
    } else {
      std::string joined = doc.title.empty() ? doc.text : doc.title + " " + doc.text;
      s = index->Upsert(i, joined);
    }
    if (!s.ok()) Fail(s.ToString());
  }
  const double index_seconds = Seconds(t0);

  if (!args.snapshot.empty()) {
    const uint64_t digest = index->Digest();
    if (absl::Status s = index->Save(args.snapshot, 1); !s.ok()) Fail(s.ToString());
    auto loaded = KeywordIndex::Load(args.snapshot);
    if (!loaded.ok()) Fail(loaded.status().ToString());
    if (loaded->index->Digest() != digest) Fail("the reloaded snapshot's digest differs");
    index = std::move(loaded->index);
  }

  neodb::tools::Run dense;
  neodb::keyword::FusionOptions fusion;
  if (!args.dense_run.empty()) {
    auto run = neodb::tools::LoadRun(args.dense_run);
    if (!run.ok()) Fail(run.status().ToString());
    dense = std::move(*run);
    auto method = neodb::keyword::ParseFusionMethod(args.fusion);
    if (!method.ok()) Fail(method.status().ToString());
    fusion.method = *method;
    fusion.alpha = args.alpha;
    fusion.max_alpha = args.max_alpha;
    fusion.agreement_depth = args.agreement_depth;
  }

  std::ofstream out(args.run_out);
  if (!out) Fail("cannot write " + args.run_out);
  std::vector<double> latency_ms;
  double alpha_sum = 0;
  for (const auto& [qid, qtext] : data->queries) {
    auto t = std::chrono::steady_clock::now();
    auto hits = index->Search(qtext, args.depth);
    latency_ms.push_back(Seconds(t) * 1e3);
    if (!hits.ok()) Fail(hits.status().ToString());
    if (args.dense_run.empty()) {
      for (const auto& h : *hits)
        out << qid << '\t' << data->corpus[h.id].id << '\t' << h.score << '\n';
      continue;
    }
    std::vector<neodb::keyword::RankedId> keyword_leg, vector_leg;
    for (const auto& h : *hits) keyword_leg.push_back({h.id, h.score});
    for (const auto& [doc, score] : dense[qid]) {
      auto it = internal_id.find(doc);
      if (it != internal_id.end() && vector_leg.size() < static_cast<size_t>(args.depth)) {
        vector_leg.push_back({it->second, score});
      }
    }
    auto fused = neodb::keyword::Fuse(keyword_leg, vector_leg, args.depth, fusion);
    if (!fused.ok()) Fail(fused.status().ToString());
    alpha_sum += fused->alpha;
    char score[32];
    for (const auto& h : fused->hits) {
      std::snprintf(score, sizeof(score), "%.9g", h.score);
      out << qid << '\t' << data->corpus[h.id].id << '\t' << score << '\n';
    }
  }
  const auto stats = index->Stats();
  std::printf(
      "keyword_eval\t%s\tanalyzer %s\tk1 %.2f b %.2f\t%zu docs\t%zu queries\t"
      "index %.2f s (%.1f us/doc)\tquery p50 %.3f ms p99 %.3f ms\t%llu terms\t%llu postings\t"
      "%.1f MB",
      args.split.c_str(), args.analyzer.c_str(), args.k1, args.b, data->corpus.size(),
      data->queries.size(), index_seconds, index_seconds * 1e6 / data->corpus.size(),
      Percentile(latency_ms, 0.5), Percentile(latency_ms, 0.99),
      static_cast<unsigned long long>(stats.terms), static_cast<unsigned long long>(stats.postings),
      stats.memory_bytes / 1e6);
  if (!args.dense_run.empty()) {
    std::printf("\tfusion %s\tmean alpha %.4f", args.fusion.c_str(),
                data->queries.empty() ? 0.0 : alpha_sum / data->queries.size());
  }
  std::printf("\n");
  return 0;
}
