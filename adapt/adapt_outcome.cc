// AdaptJob's outcome (stages 4-5): old and new model measured on the
// held-out pairs, the table, the record --rollback needs, and the swap when
// --apply asks for it and the new model is better.
#include <cstdio>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "adapt/adapt_job.h"
#include "adapt/adapt_report.h"
#include "adapt/job_io.h"
#include "common/env.h"
#include "common/status_macros.h"

namespace neodb::adapt {
namespace {

using json = nlohmann::json;

}  // namespace

// --- 4. old and new model on the held-out queries ----------------------------

// Against the whole collection (and on --test, reported only: no decision
// looks at it).
absl::Status AdaptJob::Evaluate() {
  ASSIGN_OR_RETURN(held_, MakeQuerySet(split_.held_out));
  if (!a_.test_file.empty()) {
    ASSIGN_OR_RETURN(std::vector<QueryPositives> tq, ReadAdaptPairs(a_.test_file, docs_));
    ASSIGN_OR_RETURN(test_, MakeQuerySet(std::move(tq)));
  }
  std::vector<const QuerySet*> sets = {&held_};
  if (!a_.test_file.empty()) sets.push_back(&test_);
  keyword_only_ = KeywordMetrics(held_);
  auto t = std::chrono::steady_clock::now();
  ASSIGN_OR_RETURN(before_sets_,
                   EvaluateDir("old", facts_.model_dir, a_.threads, docs_, sets, reading_.embed,
                               progress_, &old_vectors_, &reuse_old_));
  timings_["eval_old_s"] = SecondsSince(t);
  t = std::chrono::steady_clock::now();
  ASSIGN_OR_RETURN(after_sets_, EvaluateDir("new", out_.string(), a_.threads, docs_, sets,
                                            reading_.embed, progress_));
  timings_["eval_new_s"] = SecondsSince(t);
  // The new model is served with the fusion its held-out pairs favour; the
  // old one as the collection serves it today (its current fusion).
  const FusionQuality& best = BestFusion(after_sets_[0]);
  best_at_ = static_cast<size_t>(&best - after_sets_[0].fusions.data());
  return absl::OkStatus();
}

absl::StatusOr<QuerySet> AdaptJob::MakeQuerySet(std::vector<QueryPositives> queries) const {
  QuerySet set;
  std::vector<std::string> texts;
  for (const auto& q : queries) texts.push_back(q.query);
  ASSIGN_OR_RETURN(set.keyword_legs, KeywordLegs(*keyword_index_, texts, keyword::kHybridLegDepth));
  set.queries = std::move(queries);
  return set;
}

// The table on stdout, the per-query file, the fusions.
absl::Status AdaptJob::Report() {
  const ModelQuality& before = before_sets_[0];
  const ModelQuality& after = after_sets_[0];
  const FusionQuality& best = after.fusions[best_at_];
  std::printf("held-out: %zu queries against all %lld documents of %s\n", split_.held_out.size(),
              static_cast<long long>(docs_.size()), a_.collection.c_str());
  PrintTable(keyword_only_, before, after, best);
  differences_ = {{"held_out", PrintDifferences(before, after, best)}};
  std::string per_query = PerQueryJsonl("held_out", held_, docs_, before, after, best);
  if (!a_.test_file.empty()) {
    std::printf("test (%s, reported only): %zu queries\n", a_.test_file.c_str(),
                test_.queries.size());
    const FusionQuality& test_served = after_sets_[1].fusions[best_at_];
    PrintTable(KeywordMetrics(test_), before_sets_[1], after_sets_[1], test_served);
    differences_["test"] = PrintDifferences(before_sets_[1], after_sets_[1], test_served);
    per_query += PerQueryJsonl("test", test_, docs_, before_sets_[1], after_sets_[1], test_served);
  }
  RETURN_IF_ERROR(WriteTextFile(out_ / "adapt_queries.jsonl", per_query));
  PrintFusions(before_sets_, after_sets_, !a_.test_file.empty());
  std::printf("old %s\nnew %s (%s)\n", facts_.model_id.c_str(), new_id_.c_str(),
              out_.string().c_str());
  // stdout is fully buffered when it is a pipe: without this the table would
  // come after the reindex's stderr progress (or never, if the swap is cut short).
  std::fflush(stdout);
  return absl::OkStatus();
}

// --- 5. the record --rollback needs, then (maybe) the swap -------------------

// The model and fusion the collection is on before the swap. A rerun that
// finds the collection on the new model already (a restart finished or
// resumed the swap it started) keeps the recorded previous model and fusion:
// the current ones are the new ones.
json AdaptJob::PreviousModel() const {
  const keyword::FusionOptions& fusion = reading_.embed.fusion;
  json previous = {{"model_dir", facts_.model_dir},
                   {"model_id", facts_.model_id},
                   {"fusion", std::string(keyword::FusionMethodName(fusion.method))},
                   {"fusion_alpha", fusion.alpha}};
  if (facts_.model_id == new_id_) {
    auto old = ReadJsonFile(out_ / "adapt.json");
    if (old.ok() && old->value("collection", "") == a_.collection && old->contains("previous")) {
      previous = (*old)["previous"];
    }
  }
  return previous;
}

// Old as served today against new as it would be served (its best fusion).
absl::Status AdaptJob::WriteRecord() {
  const ModelQuality& before = before_sets_[0];
  const ModelQuality& after = after_sets_[0];
  const FusionQuality& best = after.fusions[best_at_];
  gain_ = best.metrics.ndcg_at_10 - before.hybrid.ndcg_at_10;
  record_ = {
      {"collection", a_.collection},
      {"model_id", new_id_},
      {"previous", PreviousModel()},
      {"fusion",
       {{"method", std::string(keyword::FusionMethodName(best.options.method))},
        {"alpha", best.options.alpha},
        {"label", best.label},
        {"calibrated_on", "held-out pairs"}}},
      {"criterion",
       absl::StrFormat("hybrid nDCG@10 new (best fusion on the held-out pairs) - old (the "
                       "collection's fusion) > %g",
                       a_.min_gain)},
      {"gain", gain_},
      {"before", {{"vector", MetricsJson(before.vector)}, {"hybrid", MetricsJson(before.hybrid)}}},
      {"after",
       {{"vector", MetricsJson(after.vector)},
        {"hybrid", MetricsJson(after.hybrid)},
        {"hybrid_best_fusion", MetricsJson(best.metrics)}}},
      {"keyword", MetricsJson(keyword_only_)},
      // new - old, paired by query; each query's figures are in adapt_queries.jsonl.
      {"differences", differences_},
      {"timings", timings_},
      // Whether the old model's evaluation embedded the collection or took
      // the vectors saved before mining (also after a resume).
      {"old_model_documents", !reuse_old_                ? "embedded"
                              : old_vectors_from_server_ ? "the server's stored vectors"
                                                         : "reused from round 1's mining"},
      {"applied", false}};
  if (a_.apply && gain_ > a_.min_gain) record_["applied"] = true;
  RETURN_IF_ERROR(WriteTextFile(out_ / "adapt.json", record_.dump(2) + "\n"));
  // Only the evaluation needed them; they are as large as the collection's index.
  Env::Default()->DeleteFile(old_vectors_.file).IgnoreError();
  return absl::OkStatus();
}

absl::Status AdaptJob::Apply() {
  const FusionQuality& best = after_sets_[0].fusions[best_at_];
  const std::string& first_fusion = after_sets_[0].fusions.front().label;
  if (!a_.apply) {
    std::printf("hybrid nDCG@10 %+.4f; not applied (pass --apply)\n", gain_);
    return absl::OkStatus();
  }
  if (!(gain_ > a_.min_gain)) {
    std::printf("hybrid nDCG@10 %+.4f is not above %g: not applied; %s stays on %s\n", gain_,
                a_.min_gain, a_.collection.c_str(), facts_.model_id.c_str());
    return absl::OkStatus();
  }
  std::printf("hybrid nDCG@10 %+.4f: applying (reindexing %s onto %s)\n", gain_,
              a_.collection.c_str(), new_id_.c_str());
  std::fflush(stdout);
  const auto t = std::chrono::steady_clock::now();
  RETURN_IF_ERROR(server_.ReindexAndWait(a_.collection, out_.string()));
  timings_["reindex_s"] = SecondsSince(t);
  // After the swap, not before: until then the old model serves, and the
  // fusion calibrated for the new one would misweight it. A crash between
  // the two leaves the new model on the old fusion (the state of an
  // in-batch adapt before this step existed); rerunning with --resume sets it.
  if (best.label != first_fusion) {
    RETURN_IF_ERROR(server_.SetFusion(a_.collection, best.options));
    std::printf("fusion: %s now fuses hybrid queries by %s (was %s)\n", a_.collection.c_str(),
                best.label.c_str(), first_fusion.c_str());
  }
  ASSIGN_OR_RETURN(const VerifyReport v, server_.Verify(a_.collection));
  std::printf("applied: %s is on %s (%s)\n", a_.collection.c_str(), v.model_id.c_str(),
              VerifyCounts(v).c_str());
  return CheckVerifiedModel(v, new_id_, "the reindex");
}

absl::Status AdaptJob::Finish() {
  timings_["total_s"] = SecondsSince(t_all_);
  record_["timings"] = timings_;
  RETURN_IF_ERROR(WriteTextFile(out_ / "adapt.json", record_.dump(2) + "\n"));
  std::printf("timings: %s\n", timings_.dump().c_str());
  std::fflush(stdout);
  return absl::OkStatus();
}

}  // namespace neodb::adapt
