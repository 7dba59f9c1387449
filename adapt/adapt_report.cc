#include "adapt/adapt_report.h"

#include <cstdio>
#include <utility>

#include "absl/strings/str_cat.h"
#include "adapt/paired_difference.h"

namespace neodb::adapt {
namespace {

using json = nlohmann::json;

void PrintRow(const char* mode, const char* model, const RankMetrics& m) {
  std::printf("%-8s %-4s %8.4f %8.4f %8.4f\n", mode, model, m.ndcg_at_10, m.recall_at_10,
              m.mrr_at_10);
}

}  // namespace

json MetricsJson(const RankMetrics& m) {
  return {{"ndcg@10", m.ndcg_at_10},
          {"recall@10", m.recall_at_10},
          {"mrr@10", m.mrr_at_10},
          {"queries", m.queries}};
}

std::string PairsJsonl(const std::vector<QueryPositives>& queries, const CollectionDocs& docs) {
  std::string out;
  for (const auto& q : queries) {
    for (int64_t p : q.positives) {
      absl::StrAppend(&out, json{{"query", q.query}, {"positive_id", docs.ids[p]}}.dump(), "\n");
    }
  }
  return out;
}

RankMetrics KeywordMetrics(const QuerySet& set) {
  std::vector<std::vector<int64_t>> ranked, relevant;
  for (size_t q = 0; q < set.queries.size(); ++q) {
    ranked.push_back(Positions(set.keyword_legs[q], 10));
    relevant.push_back(set.queries[q].positives);
  }
  return ScoreRankings(ranked, relevant);
}

void PrintTable(const RankMetrics& keyword_only, const ModelQuality& before,
                const ModelQuality& after, const FusionQuality& served) {
  std::printf("%-8s %-4s %8s %8s %8s\n", "mode", "model", "nDCG@10", "R@10", "MRR@10");
  PrintRow("keyword", "-", keyword_only);
  PrintRow("vector", "old", before.vector);
  PrintRow("vector", "new", after.vector);
  PrintRow("hybrid", "old", before.hybrid);
  PrintRow("hybrid", "new", after.hybrid);
  std::printf("%-8s %-4s %8.4f %8.4f %8.4f  (fusion %s)\n", "hybrid", "new",
              served.metrics.ndcg_at_10, served.metrics.recall_at_10, served.metrics.mrr_at_10,
              served.label.c_str());
}

json PrintDifferences(const ModelQuality& before, const ModelQuality& after,
                      const FusionQuality& served) {
  const PairedDifference v =
      PairedBootstrap(before.vector.ndcg_per_query, after.vector.ndcg_per_query);
  const PairedDifference h =
      PairedBootstrap(before.hybrid.ndcg_per_query, served.metrics.ndcg_per_query);
  std::printf(
      "new - old nDCG@10, paired over the same %lld queries (95%% bootstrap interval; "
      "queries better / worse):\n",
      static_cast<long long>(v.queries));
  json out = json::object();
  for (const auto& [mode, d] : {std::pair{"vector", v}, std::pair{"hybrid", h}}) {
    std::printf("  %-7s %+.4f (%+.4f .. %+.4f)  %lld / %lld\n", mode, d.mean, d.low, d.high,
                static_cast<long long>(d.better), static_cast<long long>(d.worse));
    out[mode] = {{"mean", d.mean},     {"low95", d.low},   {"high95", d.high},
                 {"better", d.better}, {"worse", d.worse}, {"queries", d.queries}};
  }
  return out;
}

std::string PerQueryJsonl(const std::string& set_name, const QuerySet& set,
                          const CollectionDocs& docs, const ModelQuality& before,
                          const ModelQuality& after, const FusionQuality& served) {
  std::string lines;
  for (size_t q = 0; q < set.queries.size(); ++q) {
    json relevant = json::array();
    for (int64_t p : set.queries[q].positives) relevant.push_back(docs.ids[p]);
    const json line = {{"set", set_name},
                       {"query", set.queries[q].query},
                       {"relevant", relevant},
                       {"old",
                        {{"vector", before.vector.ndcg_per_query[q]},
                         {"hybrid", before.hybrid.ndcg_per_query[q]}}},
                       {"new",
                        {{"vector", after.vector.ndcg_per_query[q]},
                         {"hybrid", served.metrics.ndcg_per_query[q]}}}};
    lines += line.dump() + "\n";
  }
  return lines;
}

void PrintFusions(const std::vector<ModelQuality>& before, const std::vector<ModelQuality>& after,
                  bool with_test) {
  std::printf(
      "fusions, nDCG@10 (old / new model on the held-out pairs%s); first: the collection's\n",
      with_test ? " | on the test pairs" : "");
  for (size_t f = 0; f < after[0].fusions.size(); ++f) {
    std::printf("  %-13s %8.4f %8.4f", after[0].fusions[f].label.c_str(),
                before[0].fusions[f].metrics.ndcg_at_10, after[0].fusions[f].metrics.ndcg_at_10);
    if (with_test) {
      std::printf(" | %8.4f %8.4f", before[1].fusions[f].metrics.ndcg_at_10,
                  after[1].fusions[f].metrics.ndcg_at_10);
    }
    std::printf("\n");
  }
}

}  // namespace neodb::adapt
