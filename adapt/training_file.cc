#include "adapt/training_file.h"

#include <algorithm>
#include <memory>
#include <set>
#include <string>

#include "absl/strings/str_cat.h"
#include "adapt/negative_mining.h"
#include "common/atomic_file.h"
#include "common/env.h"
#include "common/status_macros.h"

namespace neodb::adapt {
namespace {

using json = nlohmann::json;

// A line that draws nothing, for a caller that wants none.
class NoProgress : public ProgressSink {
 public:
  void Update(const std::string&) override {}
  void Finish(const std::string&) override {}
};

// The candidates of one query's legs: the served or vector leg (from the
// model in process or the server) and the keyword leg, as positions.
absl::Status QueryLegs(ServerSide& server, const AdaptOptions& a, const CollectionDocs& docs,
                       const keyword::KeywordIndex& keyword_index, const QueryPositives& q,
                       const std::vector<int64_t>* model_leg, std::vector<int64_t>* served,
                       std::vector<int64_t>* keyword_leg) {
  if (model_leg != nullptr) {
    *served = *model_leg;
  } else if (a.mine_from != "keyword") {
    ASSIGN_OR_RETURN(std::vector<std::string> ids,
                     server.NearTextIds(a.collection, q.query, a.mine_depth,
                                        a.mine_from == "vector" ? "vector" : ""));
    for (const std::string& id : ids) {
      auto it = docs.index_of_id.find(id);
      if (it != docs.index_of_id.end()) served->push_back(it->second);
    }
  }
  ASSIGN_OR_RETURN(std::vector<keyword::KeywordHit> hits,
                   keyword_index.Search(q.query, a.mine_depth));
  for (const auto& h : hits) keyword_leg->push_back(static_cast<int64_t>(h.id));
  return absl::OkStatus();
}

// Candidates of the served leg passed over as near-duplicates of a positive
// (for the report).
int64_t NearDuplicates(const std::vector<int64_t>& served, const QueryPositives& q,
                       const CollectionDocs& docs, double jaccard) {
  int64_t n = 0;
  for (int64_t c : served) {
    if (std::find(q.positives.begin(), q.positives.end(), c) != q.positives.end()) continue;
    for (int64_t p : q.positives) {
      if (IsNearDuplicate(docs.texts[c], docs.texts[p], jaccard)) {
        ++n;
        break;
      }
    }
  }
  return n;
}

}  // namespace

absl::StatusOr<json> MineTrainingFile(ServerSide& server, const AdaptOptions& a,
                                      const CollectionDocs& docs,
                                      const keyword::KeywordIndex& keyword_index,
                                      const std::vector<QueryPositives>& train,
                                      const ModelLegs* model, bool model_leg_is_vector,
                                      const NewProgress& new_progress,
                                      const std::filesystem::path& path) {
  MiningOptions mopt{.count = std::max(a.negatives, a.negative_pool),
                     .jaccard_threshold = a.jaccard,
                     .skip = a.mine_skip,
                     .max_score_ratio = model != nullptr ? a.max_score_ratio : 0};
  std::string out;
  int64_t mined = 0, from_server = 0, from_keyword = 0, skipped_duplicates = 0, lines = 0;
  int64_t passed_over_by_score = 0;
  std::unique_ptr<ProgressSink> progress;
  if (new_progress) progress = new_progress();
  if (progress == nullptr) progress = std::make_unique<NoProgress>();
  auto progress_text = [&](size_t done) {
    return absl::StrCat("mining: ", done, "/", train.size(), " queries, ", mined, " negatives");
  };
  for (size_t qi = 0; qi < train.size(); ++qi) {
    const QueryPositives& q = train[qi];
    std::vector<int64_t> negatives;
    if (a.negatives > 0) {
      std::vector<int64_t> served, keyword_leg;
      RETURN_IF_ERROR(QueryLegs(server, a, docs, keyword_index, q,
                                model != nullptr && model_leg_is_vector ? &model->legs[qi]
                                                                        : nullptr,
                                &served, &keyword_leg));
      QueryScore score;
      if (model != nullptr) score = [model, qi](int64_t doc) { return model->Cosine(qi, doc); };
      negatives =
          MineNegatives(served, keyword_leg, q.positives, docs, mopt, score, &passed_over_by_score);
      const std::set<int64_t> v(served.begin(), served.end());
      for (int64_t n : negatives) (v.count(n) ? from_server : from_keyword) += 1;
      skipped_duplicates += NearDuplicates(served, q, docs, a.jaccard);
    }
    mined += static_cast<int64_t>(negatives.size());
    json neg = json::array();
    for (int64_t n : negatives) neg.push_back(docs.texts[n]);
    for (int64_t p : q.positives) {
      json line = {{"query", q.query}, {"positive", docs.texts[p]}};
      if (!neg.empty()) line["negatives"] = neg;
      absl::StrAppend(&out, line.dump(), "\n");
      ++lines;
    }
    progress->Update(progress_text(qi + 1));
  }
  progress->Finish(progress_text(train.size()));
  RETURN_IF_ERROR(WriteFileAtomically(Env::Default(), path.string(), {out}));
  return json{{"queries", train.size()},
              {"pairs", lines},
              {"negatives", mined},
              {"from_server_ranking", from_server},
              {"from_keyword_leg_only", from_keyword},
              {"near_duplicates_in_server_ranking", skipped_duplicates},
              {"max_score_ratio", mopt.max_score_ratio},
              {"passed_over_by_score", passed_over_by_score}};
}

}  // namespace neodb::adapt
