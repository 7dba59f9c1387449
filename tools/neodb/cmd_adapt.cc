// neodb adapt / neodb adapt --rollback: make a live collection better with
// the user's (query, relevant document) pairs (tools/adapt/README.md).
//
// A client-side command (tools/adapt/README.md argues why): it lists the
// collection's documents and asks the server's own search for hard negatives
// over gRPC, trains and evaluates here (encoder/train, tools/adapt), and asks
// the server to swap the collection onto the new checkpoint (Admin.Reindex,
// the engine's atomic swap). The model directory must be readable by both
// the server and this command (same machine or shared file system).
//
// Files: <out>/ is the new checkpoint (with lineage.json, and adapt.json: the
// collection's previous model, which --rollback swaps back to);
// <out>.adapt/ holds the mined training pairs and the held-out queries
// (kept, so a --resume reuses them); <out>.work/ the training checkpoints.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <optional>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "api/convert.h"
#include "engine/embed_settings.h"
#include "common/atomic_file.h"
#include "common/env.h"
#include "common/status_macros.h"
#include "encoder/checkpoint/weights.h"
#include "encoder/encoder.h"
#include "encoder/train/finetune.h"
#include "nlohmann/json.hpp"
#include "tools/adapt/adapt_pairs.h"
#include "tools/adapt/collection_eval.h"
#include "tools/adapt/negative_mining.h"
#include "tools/adapt/paired_difference.h"
#include "tools/adapt/vector_cache.h"
#include "tools/neodb/adapt_client.h"
#include "tools/neodb/commands.h"
#include "tools/neodb/progress_line.h"

namespace neodb::cli {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

// --warmup's default: a tenth of each round's steps.
constexpr int64_t kWarmupTenth = -1;

struct AdaptArgs {
  ClientFlags client;  // --server, --timeout (default 60 s), --api-key, --tls-*
  std::string collection;
  std::string rollback;  // --rollback C
  std::string pairs;
  std::string eval_file;
  std::string test_file;  // --test: scored and reported, never used for a decision
  double eval_split = 0.2;
  uint64_t split_seed = 1;
  std::string out;
  int negatives = 1;  // hard negatives per training pair in a step; 0 = in-batch only
  // Mined per training query; the trainer draws `negatives` of them afresh
  // each time the pair comes round (TrainerOptions::negatives_per_pair).
  // 0 = `negatives` (each pair always meets the same ones).
  int negative_pool = 0;
  int mine_depth = 20;  // documents of each leg searched for negatives
  // vector (the model alone: what the fine-tune changes) | served (the
  // collection's default ranking, hybrid). SciFact, same split and steps:
  // vector +0.035 nDCG@10 over in-batch on the vector leg, served +0.000
  // (tools/adapt/README.md). keyword: the BM25 leg alone (DPR's negatives).
  std::string mine_from = "vector";
  int mine_skip = 0;     // top ranks of each leg passed over (MiningOptions::skip)
  double jaccard = 0.9;  // near-duplicate threshold
  // Candidates scoring above this × the query's positive (cosine under the
  // model being adapted) are passed over (MiningOptions::max_score_ratio);
  // 0 = off. On: round 1 embeds the collection in process for the scores.
  double max_score_ratio = 0;
  // The current model's vectors of the collection: embedded in process rather
  // than read from the server (its stored vectors), e.g. to check those.
  bool embed_old = false;
  // Mining rounds (ANCE-style): round 1 mines from the collection's searches
  // and trains steps/rounds; each later round mines again from the model the
  // round before trained (its own mistakes, which the first model's are not)
  // and goes on training it. The total steps stay --steps.
  int rounds = 1;
  encoder::train::TrainerOptions trainer;
  int64_t max_length = 0;
  int threads = 0;
  bool resume = false;
  bool apply = false;
  double min_gain = 0;  // apply when new hybrid nDCG@10 > old + min_gain
};

// ---------------------------------------------------------------------------

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

absl::Status WriteFile(const fs::path& path, const std::string& text) {
  return WriteFileAtomically(Env::Default(), path.string(), {text});
}

absl::StatusOr<json> ReadJson(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot open ", path.string()));
  try {
    return json::parse(in);
  } catch (const json::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat(path.string(), ": malformed JSON: ", e.what()));
  }
}

json MetricsJson(const adapt::RankMetrics& m) {
  return {{"ndcg@10", m.ndcg_at_10},
          {"recall@10", m.recall_at_10},
          {"mrr@10", m.mrr_at_10},
          {"queries", m.queries}};
}

// Writes the held-out queries (query + positive_id lines) so a rerun, or a
// reader, can see exactly what was measured.
std::string PairsJsonl(const std::vector<adapt::QueryPositives>& queries,
                       const adapt::CollectionDocs& docs) {
  std::string out;
  for (const auto& q : queries) {
    for (int64_t p : q.positives) {
      absl::StrAppend(&out, json{{"query", q.query}, {"positive_id", docs.ids[p]}}.dump(), "\n");
    }
  }
  return out;
}

// How the collection embeds and how its keyword index reads a document, from
// its spec through the server's own parsers (api::FromProto, then
// engine::ParseSettings), so that what adapt mines and measures is what the
// collection serves.
struct CollectionReading {
  adapt::EmbedSettings embed;
  adapt::KeywordSettings keyword;
  std::string title_field;  // "" = none
};

absl::StatusOr<CollectionReading> ReadCollection(const v1::CollectionInfo& info) {
  ASSIGN_OR_RETURN(db::CollectionSpec spec, api::FromProto(info.spec()));
  // What the server fixed when it created the collection (the request's spec
  // leaves them to it).
  spec.dimension = static_cast<uint32_t>(std::max(info.dimension(), 0));
  spec.model_id = info.model_id();
  ASSIGN_OR_RETURN(const engine::CollectionSettings parsed, engine::ParseSettings(spec));
  CollectionReading r;
  r.embed.metric = parsed.metric;
  r.embed.pooling = parsed.pooling;
  r.embed.overflow = parsed.overflow;
  r.embed.document_prefix = spec.document_instruction;
  r.embed.query_prefix = spec.query_instruction;
  // What the server computes the vectors in (empty from a server that
  // predates per-collection precision: f32).
  if (!spec.precision.empty()) {
    ASSIGN_OR_RETURN(r.embed.precision, encoder::ParsePrecision(spec.precision));
  }
  r.embed.fusion = parsed.fusion;
  r.keyword.options = parsed.keyword;
  r.keyword.title_weight = parsed.title_weight;
  r.title_field = parsed.title_field;
  return r;
}

// Mines the training file: one line per (query, positive) with the query's
// mined negatives. Returns counts for the report.
// `model`: the training queries under the model being adapted, embedded in
// process (a later round, or --mine-max-score-ratio): its vector leg replaces
// the server's (unless --mine-from served/keyword in round 1: `model_leg_is_vector`
// false) and its scores feed the score rule; null = ask the server.
absl::StatusOr<json> MineTrainingFile(AdaptClient& server, const AdaptArgs& a,
                                      const adapt::CollectionDocs& docs,
                                      const keyword::KeywordIndex& keyword_index,
                                      const std::vector<adapt::QueryPositives>& train,
                                      const adapt::ModelLegs* model, bool model_leg_is_vector,
                                      const fs::path& path) {
  adapt::MiningOptions mopt{.count = std::max(a.negatives, a.negative_pool),
                            .jaccard_threshold = a.jaccard,
                            .skip = a.mine_skip,
                            .max_score_ratio = model != nullptr ? a.max_score_ratio : 0};
  std::string out;
  int64_t mined = 0, from_server = 0, from_keyword = 0, skipped_duplicates = 0, lines = 0;
  int64_t passed_over_by_score = 0;
  ProgressLine progress;
  auto progress_text = [&](size_t done) {
    return absl::StrCat("mining: ", done, "/", train.size(), " queries, ", mined, " negatives");
  };
  for (size_t qi = 0; qi < train.size(); ++qi) {
    const adapt::QueryPositives& q = train[qi];
    std::vector<int64_t> negatives;
    if (a.negatives > 0) {
      std::vector<int64_t> served, keyword_leg;
      if (model != nullptr && model_leg_is_vector) {
        served = model->legs[qi];
      } else if (a.mine_from != "keyword") {
        ASSIGN_OR_RETURN(std::vector<std::string> ids,
                         server.NearTextIds(a.collection, q.query, a.mine_depth,
                                            a.mine_from == "vector" ? "vector" : ""));
        for (const std::string& id : ids) {
          auto it = docs.index_of_id.find(id);
          if (it != docs.index_of_id.end()) served.push_back(it->second);
        }
      }
      ASSIGN_OR_RETURN(std::vector<keyword::KeywordHit> hits,
                       keyword_index.Search(q.query, a.mine_depth));
      for (const auto& h : hits) keyword_leg.push_back(static_cast<int64_t>(h.id));
      adapt::QueryScore score;
      if (model != nullptr) score = [model, qi](int64_t doc) { return model->Cosine(qi, doc); };
      negatives = adapt::MineNegatives(served, keyword_leg, q.positives, docs, mopt, score,
                                       &passed_over_by_score);
      const std::set<int64_t> v(served.begin(), served.end());
      for (int64_t n : negatives) (v.count(n) ? from_server : from_keyword) += 1;
      // Candidates passed over as near-duplicates (for the report).
      for (int64_t c : served) {
        if (std::find(q.positives.begin(), q.positives.end(), c) != q.positives.end()) continue;
        for (int64_t p : q.positives) {
          if (adapt::IsNearDuplicate(docs.texts[c], docs.texts[p], a.jaccard)) {
            ++skipped_duplicates;
            break;
          }
        }
      }
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
    progress.Update(progress_text(qi + 1));
  }
  progress.Finish(progress_text(train.size()));
  RETURN_IF_ERROR(WriteFile(path, out));
  return json{{"queries", train.size()},
              {"pairs", lines},
              {"negatives", mined},
              {"from_server_ranking", from_server},
              {"from_keyword_leg_only", from_keyword},
              {"near_duplicates_in_server_ranking", skipped_duplicates},
              {"max_score_ratio", mopt.max_score_ratio},
              {"passed_over_by_score", passed_over_by_score}};
}

// The model in `dir`, for embedding the collection in process.
absl::StatusOr<std::unique_ptr<encoder::Encoder>> OpenModel(const std::string& dir, int threads,
                                                            encoder::Precision precision) {
  encoder::EncoderOptions eopts;
  eopts.backend.num_threads = threads > 0 ? threads : 1;
  eopts.backend.precision = precision;
  ASSIGN_OR_RETURN(std::unique_ptr<encoder::Encoder> enc, encoder::Encoder::Open(dir, eopts));
  if (!enc->precision_note().empty()) {
    std::fprintf(stderr, "%s\n", enc->precision_note().c_str());
  }
  return enc;
}

// Progress of embedding the collection with the `label` model, on stderr.
std::function<void(int64_t, int64_t)> EmbedProgress(const std::string& label) {
  auto line = std::make_shared<ProgressLine>();
  return [label, line](int64_t done, int64_t total) {
    const std::string text =
        absl::StrCat("embedding the collection with the ", label, " model: ", done, "/", total);
    if (done == total) {
      line->Finish(text);
    } else {
      line->Update(text);
    }
  };
}

// Where a model's vectors of the collection may have been saved, and for what.
struct SavedVectors {
  fs::path file;
  adapt::VectorCacheKey key;  // dim: 0 here, the encoder's when it is open
};

// Saves the current model's vectors of the collection [documents, dim] where
// round 1 and step 4 look for them. Only a saving: when the disk refuses the
// file, a warning, and they are embedded again where needed.
bool SaveOldVectors(const SavedVectors& saved, const std::vector<float>& rows, int64_t dim) {
  adapt::VectorCacheKey key = saved.key;
  key.dim = dim;
  const absl::Status s = adapt::SaveDocVectors(saved.file, rows, key);
  if (!s.ok()) {
    std::fprintf(stderr, "warning: %s; the old model will embed the collection again\n",
                 std::string(s.message()).c_str());
  }
  return s.ok();
}

// Saves the server's stored vectors of the collection (AdaptClient::
// StoredVectors, as the index holds them) where round 1 and step 4 look for
// the current model's vectors. False, with the reason on stderr, when the
// listing could not give them all or the disk refuses the file: then the
// collection is embedded in process, as a saving lost, never an error.
bool SaveStoredVectors(AdaptClient::StoredVectors stored, const adapt::EmbedSettings& settings,
                       const SavedVectors& saved) {
  if (stored.rows.empty()) {
    std::fprintf(stderr, "old model: the server's stored vectors are not usable (%s)\n",
                 stored.why_not.empty() ? "none listed" : stored.why_not.c_str());
    return false;
  }
  adapt::AsIndexed(stored.rows, stored.dim, settings.metric);
  if (!SaveOldVectors(saved, stored.rows, stored.dim)) return false;
  std::fprintf(stderr, "old model: the server's stored vectors (%lld x %d)\n",
               static_cast<long long>(saved.key.documents), stored.dim);
  return true;
}

// Quality of the model in `model_dir` on each query set (adapt::EvaluateModel).
// `saved`: the collection's vectors under that model, used instead of
// embedding the collection when they are there and match (`*reused` says).
absl::StatusOr<std::vector<adapt::ModelQuality>> EvaluateDir(
    const std::string& label, const std::string& model_dir, int threads,
    const adapt::CollectionDocs& docs, const std::vector<const adapt::QuerySet*>& sets,
    const adapt::EmbedSettings& settings, const SavedVectors* saved = nullptr,
    bool* reused = nullptr) {
  ASSIGN_OR_RETURN(std::unique_ptr<encoder::Encoder> enc,
                   OpenModel(model_dir, threads, settings.precision));
  std::optional<std::vector<float>> doc_vecs;
  if (saved != nullptr) {
    adapt::VectorCacheKey key = saved->key;
    key.dim = enc->dim();
    std::string why_not;
    doc_vecs = adapt::LoadDocVectors(saved->file, key, &why_not);
    if (!doc_vecs) {
      std::fprintf(stderr, "%s model: embedding the collection (%s)\n", label.c_str(),
                   why_not.c_str());
    }
  }
  if (reused != nullptr) *reused = doc_vecs.has_value();
  return adapt::EvaluateModel(*enc, docs, sets, settings, EmbedProgress(label),
                              doc_vecs ? &*doc_vecs : nullptr);
}

void PrintRow(const char* mode, const char* model, const adapt::RankMetrics& m) {
  std::printf("%-8s %-4s %8.4f %8.4f %8.4f\n", mode, model, m.ndcg_at_10, m.recall_at_10,
              m.mrr_at_10);
}

absl::StatusOr<adapt::QuerySet> MakeQuerySet(const keyword::KeywordIndex& keyword_index,
                                             std::vector<adapt::QueryPositives> queries) {
  adapt::QuerySet set;
  std::vector<std::string> texts;
  for (const auto& q : queries) texts.push_back(q.query);
  ASSIGN_OR_RETURN(set.keyword_legs,
                   adapt::KeywordLegs(keyword_index, texts, keyword::kHybridLegDepth));
  set.queries = std::move(queries);
  return set;
}

adapt::RankMetrics KeywordMetrics(const adapt::QuerySet& set) {
  std::vector<std::vector<int64_t>> ranked, relevant;
  for (size_t q = 0; q < set.queries.size(); ++q) {
    ranked.push_back(adapt::Positions(set.keyword_legs[q], 10));
    relevant.push_back(set.queries[q].positives);
  }
  return adapt::ScoreRankings(ranked, relevant);
}

// `served`: the new model's fusion as it would be served (BestFusion).
void PrintTable(const adapt::RankMetrics& keyword_only, const adapt::ModelQuality& before,
                const adapt::ModelQuality& after, const adapt::FusionQuality& served) {
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

// new - old nDCG@10 over the same queries, paired: the vector leg, and the
// hybrid as each model would be served (old: the collection's fusion; new:
// `served`). Printed under the table and returned for adapt.json.
json PrintDifferences(const adapt::ModelQuality& before, const adapt::ModelQuality& after,
                      const adapt::FusionQuality& served) {
  const adapt::PairedDifference v =
      adapt::PairedBootstrap(before.vector.ndcg_per_query, after.vector.ndcg_per_query);
  const adapt::PairedDifference h =
      adapt::PairedBootstrap(before.hybrid.ndcg_per_query, served.metrics.ndcg_per_query);
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

// One JSON line per query of `set`: its text, its relevant documents' ids,
// and its nDCG@10 under the old and the new model (vector; hybrid as each
// would be served), so that a user sees which queries the new model moves
// and two runs can be compared query by query (tools/adapt/compare_runs.py).
std::string PerQueryJsonl(const std::string& set_name, const adapt::QuerySet& set,
                          const adapt::CollectionDocs& docs, const adapt::ModelQuality& before,
                          const adapt::ModelQuality& after, const adapt::FusionQuality& served) {
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

// --out, or a new adapt-<collection>-<time> inside `models_dir` (the
// server's, where it can load the model; "" when it has none) or else in the
// current directory; absolute.
fs::path DefaultOut(const AdaptArgs& a, const std::string& models_dir) {
  const std::string name = absl::StrCat("adapt-", a.collection, "-", std::time(nullptr));
  const fs::path out = !a.out.empty()         ? fs::path(a.out)
                       : !models_dir.empty() ? fs::path(models_dir) / name
                                             : fs::path(name);
  return fs::absolute(out).lexically_normal();
}

// Whether the server would take --apply's reindex onto `out` (its dry run):
// the key's role, the collection, the path. Its refusal, with what to do.
absl::Status CheckApply(AdaptClient& server, const AdaptArgs& a, const fs::path& out,
                        const std::string& models_dir) {
  absl::Status s = server.CheckReindex(a.collection, out.string());
  if (s.ok()) return s;
  // A key whose role is too low is refused before the handler, in words of
  // its own; the path is refused with "models".
  std::string advice;
  if (s.code() == absl::StatusCode::kPermissionDenied &&
      absl::StrContains(s.message(), "models")) {
    advice = models_dir.empty()
                 ? "; --out must then lie inside DIR (or be left out: adapt then writes "
                   "inside it)"
                 : absl::StrCat("; --out must lie inside the server's models directory ",
                                models_dir, " (or be left out: adapt then writes inside it)");
  }
  return absl::Status(s.code(),
                      absl::StrCat("--apply: the server would not reindex ", a.collection,
                                   " onto ", out.string(), ": ", s.message(), advice,
                                   ". Nothing was done (run without --apply to only measure)"));
}

absl::Status RunAdapt(const AdaptArgs& a) {
  if (a.negatives < 0) return absl::InvalidArgumentError("--negatives must be >= 0");
  // The trainer's own checks, before anything is read or mined.
  RETURN_IF_ERROR(encoder::train::CheckTrainerNumbers(a.trainer));
  if (a.trainer.warmup < 0 && a.trainer.warmup != kWarmupTenth)
    return absl::InvalidArgumentError("--warmup must be >= 0");
  if (a.negative_pool < 0) return absl::InvalidArgumentError("--negative-pool must be >= 0");
  if (a.rounds < 1 || a.rounds > 10)
    return absl::InvalidArgumentError("--rounds must be in [1, 10]");
  if (a.rounds > 1 && a.negatives == 0) {
    return absl::InvalidArgumentError(
        "--rounds > 1 mines again each round: it needs --negatives >= 1");
  }
  if (a.rounds > a.trainer.steps) {
    return absl::InvalidArgumentError("--rounds must not exceed --steps");
  }
  if (a.negative_pool > 0 && a.negatives == 0) {
    return absl::InvalidArgumentError("--negative-pool needs --negatives >= 1 drawn from it");
  }
  if (a.mine_depth < 1 || a.mine_depth > 1000) {
    return absl::InvalidArgumentError("--mine-depth must be in [1, 1000]");
  }
  if (a.mine_from != "served" && a.mine_from != "vector" && a.mine_from != "keyword") {
    return absl::InvalidArgumentError("--mine-from must be served, vector or keyword");
  }
  if (!(a.max_score_ratio >= 0 && a.max_score_ratio <= 10)) {
    return absl::InvalidArgumentError("--mine-max-score-ratio must be in [0, 10] (0 = off)");
  }
  if (a.mine_skip < 0 || a.mine_skip >= a.mine_depth) {
    return absl::InvalidArgumentError("--mine-skip must be in [0, --mine-depth)");
  }
  if (!(a.jaccard > 0 && a.jaccard <= 1)) {
    return absl::InvalidArgumentError("--near-duplicate-jaccard must be in (0, 1]");
  }
  const auto t_all = std::chrono::steady_clock::now();
  json timings = json::object();
  AdaptClient server(a.client);
  ASSIGN_OR_RETURN(const v1::CollectionInfo info, server.Describe(a.collection));
  if (info.spec().vectors() == v1::VECTOR_SOURCE_EXTERNAL) {
    // Its documents' vectors are the client's, not a model's of this server:
    // a fine-tuned model could embed queries only, against vectors it never made.
    return absl::FailedPreconditionError(absl::StrCat(
        "collection ", a.collection, " holds external vectors (", info.model_id(),
        "), which the client computes: there is no model on the server that embeds its "
        "documents, so none to fine-tune"));
  }
  if (info.model_dir().empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat("collection ", a.collection, " is on the server's unnamed default model (",
                     info.model_id(), "); start the server with --model DIR to fine-tune it"));
  }
  const std::string model_dir = info.model_dir();
  // Before any mining or training: an architecture the trainer runs.
  RETURN_IF_ERROR(encoder::train::CheckTrainable(model_dir));
  ASSIGN_OR_RETURN(const CollectionReading reading, ReadCollection(info));
  const adapt::EmbedSettings& settings = reading.embed;
  // Without --out the new model goes where the server can load it: into its
  // models directory when it has one, else into the current directory.
  ASSIGN_OR_RETURN(const v1::StatsResponse stats, server.Stats());
  const fs::path out = DefaultOut(a, stats.models_dir());
  const fs::path side = fs::path(out.string() + ".adapt");
  std::error_code ec;
  const bool trained = fs::exists(out / "lineage.json", ec);
  if (fs::exists(out, ec) && !(a.resume && trained)) {
    return absl::AlreadyExistsError(absl::StrCat(
        "--out ", out.string(), " exists; choose a new directory (or --resume a finished one)"));
  }
  // Everything the swap at the end needs, asked now, before anything is
  // written, mined or trained: not after an hour of training.
  if (a.apply) RETURN_IF_ERROR(CheckApply(server, a, out, stats.models_dir()));

  // 1. The collection's documents and the pairs.
  auto t = std::chrono::steady_clock::now();
  // With the vectors the server holds for them: the current model's vectors
  // of the collection, exactly as served, with nothing to embed.
  AdaptClient::StoredVectors stored{.model_id = info.model_id()};
  ASSIGN_OR_RETURN(
      const adapt::CollectionDocs docs,
      server.ListDocuments(a.collection, reading.title_field, a.embed_old ? nullptr : &stored));
  if (docs.size() == 0) return absl::FailedPreconditionError("the collection is empty");
  ASSIGN_OR_RETURN(auto keyword_index, adapt::BuildKeywordIndex(docs, reading.keyword));
  timings["list_and_keyword_index_s"] = Seconds(t);
  std::fprintf(stderr, "collection %s: %lld documents, model %s (%s), %s, %s\n",
               a.collection.c_str(), static_cast<long long>(docs.size()), info.model_id().c_str(),
               model_dir.c_str(), std::string(index::MetricName(settings.metric)).c_str(),
               std::string(encoder::PrecisionName(settings.precision)).c_str());
  std::fprintf(stderr, "keyword leg as the collection's: analyzer %s, BM25 k1 %g b %g%s\n",
               std::string(keyword::AnalyzerKindName(reading.keyword.options.analyzer)).c_str(),
               reading.keyword.options.k1, reading.keyword.options.b,
               reading.title_field.empty()
                   ? ""
                   : absl::StrFormat(", title field \"%s\" at weight %g", reading.title_field,
                                     reading.keyword.title_weight)
                         .c_str());
  ASSIGN_OR_RETURN(std::vector<adapt::QueryPositives> all, adapt::ReadAdaptPairs(a.pairs, docs));
  adapt::PairSplit split;
  if (!a.eval_file.empty()) {
    split.train = std::move(all);
    ASSIGN_OR_RETURN(split.held_out, adapt::ReadAdaptPairs(a.eval_file, docs));
  } else {
    ASSIGN_OR_RETURN(split, adapt::SplitPairs(all, a.eval_split, a.split_seed));
  }
  std::fprintf(stderr, "%zu training queries, %zu held-out queries\n", split.train.size(),
               split.held_out.size());

  // 2-3. Mine, then fine-tune the collection's model on what was mined; with
  // --rounds N, N times, each round mining again from the model the round
  // before trained (an intermediate model lives in <out>.adapt/roundK) and
  // training it further. A resumed run reuses each finished round and each
  // mined file.
  RETURN_IF_ERROR(Env::Default()->CreateDir(side.string()));
  json mining = json::array();
  std::string base_dir = model_dir;
  // The collection under the current model is saved here: the server's
  // stored vectors, or what round 1 embeds in process when those cannot be
  // had. Round 1's in-process mining and step 4's evaluation of the old model
  // read them instead of embedding the whole collection (also after a
  // resume), and they stay out of memory through the fine-tune.
  const SavedVectors old_vectors = {.file = side / "old_model_vectors.bin",
                                    .key = {.model_id = info.model_id(),
                                            .documents = docs.size(),
                                            .dim = 0,  // the encoder's, once it is open
                                            .documents_hash = adapt::DocumentsHash(docs),
                                            .settings = adapt::SettingsFingerprint(settings)}};
  const bool old_vectors_from_server =
      !a.embed_old && SaveStoredVectors(std::move(stored), settings, old_vectors);
  for (int r = 1; r <= a.rounds && !trained; ++r) {
    const bool last_round = r == a.rounds;
    const fs::path round_out = last_round ? out : side / absl::StrCat("round", r);
    const std::string suffix = r == 1 ? "" : absl::StrCat(".round", r);
    const fs::path train_file = side / absl::StrCat("train", suffix, ".jsonl");
    const fs::path mining_file = side / absl::StrCat("mining", suffix, ".json");
    if (!last_round && fs::exists(round_out / "lineage.json", ec)) {
      ASSIGN_OR_RETURN(json m, ReadJson(mining_file));
      mining.push_back(m);
      base_dir = round_out.string();
      std::fprintf(stderr, "resuming: round %d's model is in %s\n", r, base_dir.c_str());
      continue;
    }
    if (a.resume && fs::exists(train_file, ec)) {
      std::fprintf(stderr, "resuming: reusing %s\n", train_file.string().c_str());
      ASSIGN_OR_RETURN(json m, ReadJson(mining_file));
      mining.push_back(m);
    } else {
      t = std::chrono::steady_clock::now();
      // The model in process: a later round mines the previous round's
      // model; the score rule needs the scores of the model being adapted.
      const bool in_process = r > 1 || (a.negatives > 0 && a.max_score_ratio > 0);
      adapt::ModelLegs model;
      if (in_process) {
        ASSIGN_OR_RETURN(std::unique_ptr<encoder::Encoder> enc,
                         OpenModel(base_dir, a.threads, settings.precision));
        std::vector<std::string> queries;
        for (const auto& q : split.train) queries.push_back(q.query);
        // Round 1 mines the current model: its saved vectors, when there are.
        std::optional<std::vector<float>> given;
        if (r == 1) {
          adapt::VectorCacheKey key = old_vectors.key;
          key.dim = enc->dim();
          std::string why_not;
          given = adapt::LoadDocVectors(old_vectors.file, key, &why_not);
        }
        const bool embedded = !given.has_value();
        ASSIGN_OR_RETURN(model,
                         adapt::ModelVectorLegs(*enc, docs, queries, settings, a.mine_depth,
                                                EmbedProgress(r > 1 ? absl::StrCat("round ", r - 1)
                                                                    : std::string("current")),
                                                std::move(given)));
        if (r == 1 && embedded) SaveOldVectors(old_vectors, model.doc_vecs, model.dim);
      }
      // Round 1's vector leg in process is the server's vector leg computed
      // exactly; served (hybrid) and keyword still come from their sources.
      const bool model_leg_is_vector = r > 1 || a.mine_from == "vector";
      ASSIGN_OR_RETURN(
          json m, MineTrainingFile(server, a, docs, *keyword_index, split.train,
                                   in_process ? &model : nullptr, model_leg_is_vector, train_file));
      m["round"] = r;
      m["vector_leg"] = r > 1 ? absl::StrCat("round ", r - 1, "'s model")
                        : in_process && model_leg_is_vector ? "vector (in process)"
                                                            : a.mine_from;
      timings[absl::StrCat("mine", suffix, "_s")] = Seconds(t);
      RETURN_IF_ERROR(WriteFile(mining_file, m.dump(2) + "\n"));
      if (r == 1) {
        RETURN_IF_ERROR(WriteFile(side / "held_out.jsonl", PairsJsonl(split.held_out, docs)));
      }
      mining.push_back(m);
    }

    encoder::train::FinetuneOptions ft;
    ft.model_dir = base_dir;
    ft.train_file = train_file.string();
    ft.out_dir = round_out.string();
    ft.trainer = a.trainer;
    // Each round its share of the steps; the last takes the remainder.
    const int64_t share = a.trainer.steps / a.rounds;
    ft.trainer.steps = last_round ? a.trainer.steps - share * (a.rounds - 1) : share;
    const int64_t warmup = a.trainer.warmup == kWarmupTenth
                               ? std::max<int64_t>(1, ft.trainer.steps / 10)
                               : a.trainer.warmup;
    ft.trainer.warmup = std::min(warmup, ft.trainer.steps);
    ft.trainer.resume = a.resume && fs::exists(fs::path(round_out.string() + ".work"), ec);
    if (a.negative_pool > a.negatives) ft.trainer.negatives_per_pair = a.negatives;
    ft.max_length = a.max_length;
    ft.pooling = settings.pooling;  // train the vector the collection serves
    ft.threads = a.threads;
    ft.truncate = true;
    ASSIGN_OR_RETURN(const std::string pairs_hash, encoder::train::FileHash(a.pairs));
    ft.lineage_extra = {
        {"negatives", a.negatives == 0 ? std::string("in-batch")
                      : a.negative_pool > a.negatives
                          ? absl::StrCat("mined:", a.negatives, "-of-", a.negative_pool)
                          : absl::StrCat("mined:", a.negatives)},
        {"adapt",
         {{"collection", a.collection},
          {"collection_model_dir", model_dir},
          {"pairs_file", fs::absolute(a.pairs).string()},
          {"pairs_hash", pairs_hash},
          {"eval", a.eval_file.empty()
                       ? absl::StrCat("split:", a.eval_split, ":seed:", a.split_seed)
                       : fs::absolute(a.eval_file).string()},
          {"mine_depth", a.mine_depth},
          {"mine_from", a.mine_from},
          {"mine_skip", a.mine_skip},
          {"near_duplicate_jaccard", a.jaccard},
          {"mine_max_score_ratio", a.max_score_ratio},
          {"round", r},
          {"rounds", a.rounds},
          {"mining", mining.back()}}}};
    t = std::chrono::steady_clock::now();
    if (a.rounds > 1)
      std::fprintf(stderr, "round %d of %d: %lld steps from %s\n", r, a.rounds,
                   static_cast<long long>(ft.trainer.steps), base_dir.c_str());
    RETURN_IF_ERROR(encoder::train::RunFinetune(ft, stderr));
    if (!fs::exists(round_out / "lineage.json", ec)) {
      return absl::AbortedError(
          "training stopped before its last step; run the same command with --resume");
    }
    timings[absl::StrCat("finetune", suffix, "_s")] = Seconds(t);
    base_dir = round_out.string();
  }
  ASSIGN_OR_RETURN(json lineage, ReadJson(out / "lineage.json"));
  const std::string new_id = lineage.value("model_id", "");

  // 4. Old and new model on the held-out queries against the whole collection
  // (and on --test, reported only: no decision looks at it).
  ASSIGN_OR_RETURN(const adapt::QuerySet held, MakeQuerySet(*keyword_index, split.held_out));
  adapt::QuerySet test;
  if (!a.test_file.empty()) {
    ASSIGN_OR_RETURN(std::vector<adapt::QueryPositives> tq,
                     adapt::ReadAdaptPairs(a.test_file, docs));
    ASSIGN_OR_RETURN(test, MakeQuerySet(*keyword_index, tq));
  }
  std::vector<const adapt::QuerySet*> sets = {&held};
  if (!a.test_file.empty()) sets.push_back(&test);
  const adapt::RankMetrics keyword_only = KeywordMetrics(held);
  t = std::chrono::steady_clock::now();
  bool reuse_old = false;
  ASSIGN_OR_RETURN(
      const std::vector<adapt::ModelQuality> before_sets,
      EvaluateDir("old", model_dir, a.threads, docs, sets, settings, &old_vectors, &reuse_old));
  timings["eval_old_s"] = Seconds(t);
  t = std::chrono::steady_clock::now();
  ASSIGN_OR_RETURN(const std::vector<adapt::ModelQuality> after_sets,
                   EvaluateDir("new", out.string(), a.threads, docs, sets, settings));
  timings["eval_new_s"] = Seconds(t);
  const adapt::ModelQuality& before = before_sets[0];
  const adapt::ModelQuality& after = after_sets[0];

  std::printf("held-out: %zu queries against all %lld documents of %s\n", split.held_out.size(),
              static_cast<long long>(docs.size()), a.collection.c_str());
  // The new model is served with the fusion its held-out pairs favour; the
  // old one as the collection serves it today (its current fusion).
  const adapt::FusionQuality& best = adapt::BestFusion(after);
  const size_t best_at = static_cast<size_t>(&best - after.fusions.data());
  PrintTable(keyword_only, before, after, best);
  json differences = {{"held_out", PrintDifferences(before, after, best)}};
  std::string per_query = PerQueryJsonl("held_out", held, docs, before, after, best);
  if (!a.test_file.empty()) {
    std::printf("test (%s, reported only): %zu queries\n", a.test_file.c_str(),
                test.queries.size());
    const adapt::FusionQuality& test_served = after_sets[1].fusions[best_at];
    PrintTable(KeywordMetrics(test), before_sets[1], after_sets[1], test_served);
    differences["test"] = PrintDifferences(before_sets[1], after_sets[1], test_served);
    per_query += PerQueryJsonl("test", test, docs, before_sets[1], after_sets[1], test_served);
  }
  RETURN_IF_ERROR(WriteFile(out / "adapt_queries.jsonl", per_query));
  std::printf(
      "fusions, nDCG@10 (old / new model on the held-out pairs%s); first: the collection's\n",
      a.test_file.empty() ? "" : " | on the test pairs");
  for (size_t f = 0; f < after.fusions.size(); ++f) {
    std::printf("  %-13s %8.4f %8.4f", after.fusions[f].label.c_str(),
                before.fusions[f].metrics.ndcg_at_10, after.fusions[f].metrics.ndcg_at_10);
    if (!a.test_file.empty()) {
      std::printf(" | %8.4f %8.4f", before_sets[1].fusions[f].metrics.ndcg_at_10,
                  after_sets[1].fusions[f].metrics.ndcg_at_10);
    }
    std::printf("\n");
  }
  std::printf("old %s\nnew %s (%s)\n", info.model_id().c_str(), new_id.c_str(),
              out.string().c_str());
  // stdout is fully buffered when it is a pipe: without this the table would
  // come after the reindex's stderr progress (or never, if the swap is cut short).
  std::fflush(stdout);

  // 5. The record --rollback needs, then (maybe) the swap.
  // Old as served today against new as it would be served (its best fusion).
  const double gain = best.metrics.ndcg_at_10 - before.hybrid.ndcg_at_10;
  const bool better = gain > a.min_gain;
  const bool new_fusion = best.label != after.fusions.front().label;
  // A rerun that finds the collection on the new model already (a restart
  // finished or resumed the swap it started) keeps the recorded previous
  // model and fusion: the current ones are the new ones.
  json previous = {{"model_dir", model_dir},
                   {"model_id", info.model_id()},
                   {"fusion", std::string(keyword::FusionMethodName(settings.fusion.method))},
                   {"fusion_alpha", settings.fusion.alpha}};
  if (info.model_id() == new_id) {
    auto old = ReadJson(out / "adapt.json");
    if (old.ok() && old->value("collection", "") == a.collection && old->contains("previous")) {
      previous = (*old)["previous"];
    }
  }
  json record = {
      {"collection", a.collection},
      {"model_id", new_id},
      {"previous", previous},
      {"fusion",
       {{"method", std::string(keyword::FusionMethodName(best.options.method))},
        {"alpha", best.options.alpha},
        {"label", best.label},
        {"calibrated_on", "held-out pairs"}}},
      {"criterion",
       absl::StrFormat("hybrid nDCG@10 new (best fusion on the held-out pairs) - old (the "
                       "collection's fusion) > %g",
                       a.min_gain)},
      {"gain", gain},
      {"before", {{"vector", MetricsJson(before.vector)}, {"hybrid", MetricsJson(before.hybrid)}}},
      {"after",
       {{"vector", MetricsJson(after.vector)},
        {"hybrid", MetricsJson(after.hybrid)},
        {"hybrid_best_fusion", MetricsJson(best.metrics)}}},
      {"keyword", MetricsJson(keyword_only)},
      // new - old, paired by query; each query's figures are in adapt_queries.jsonl.
      {"differences", differences},
      {"timings", timings},
      // Whether step 4 embedded the collection with the old model or took
      // the vectors round 1's in-process mining had saved (also after a
      // resume).
      {"old_model_documents", !reuse_old                ? "embedded"
                              : old_vectors_from_server ? "the server's stored vectors"
                                                        : "reused from round 1's mining"},
      {"applied", false}};
  if (a.apply && better) record["applied"] = true;
  RETURN_IF_ERROR(WriteFile(out / "adapt.json", record.dump(2) + "\n"));
  // Only step 4 needed them; they are as large as the collection's index.
  Env::Default()->DeleteFile(old_vectors.file).IgnoreError();
  if (!a.apply) {
    std::printf("hybrid nDCG@10 %+.4f; not applied (pass --apply)\n", gain);
  } else if (!better) {
    std::printf("hybrid nDCG@10 %+.4f is not above %g: not applied; %s stays on %s\n", gain,
                a.min_gain, a.collection.c_str(), info.model_id().c_str());
  } else {
    std::printf("hybrid nDCG@10 %+.4f: applying (reindexing %s onto %s)\n", gain,
                a.collection.c_str(), new_id.c_str());
    std::fflush(stdout);
    t = std::chrono::steady_clock::now();
    RETURN_IF_ERROR(server.ReindexAndWait(a.collection, out.string()));
    timings["reindex_s"] = Seconds(t);
    // After the swap, not before: until then the old model serves, and the
    // fusion calibrated for the new one would misweight it. A crash between
    // the two leaves the new model on the old fusion (the state of an
    // in-batch adapt before this step existed); rerunning with --resume sets it.
    if (new_fusion) {
      RETURN_IF_ERROR(server.SetFusion(a.collection, best.options));
      std::printf("fusion: %s now fuses hybrid queries by %s (was %s)\n", a.collection.c_str(),
                  best.label.c_str(), after.fusions.front().label.c_str());
    }
    ASSIGN_OR_RETURN(const v1::VerifyResponse v, server.Verify(a.collection));
    std::printf("applied: %s is on %s (verify: %llu stored, %llu indexed, %llu foreign)\n",
                a.collection.c_str(), v.model_id().c_str(),
                static_cast<unsigned long long>(v.stored()),
                static_cast<unsigned long long>(v.indexed()),
                static_cast<unsigned long long>(v.foreign_model()));
    if (v.model_id() != new_id) {
      return absl::InternalError(
          absl::StrCat("after the reindex the collection is on ", v.model_id(), ", not ", new_id));
    }
  }
  timings["total_s"] = Seconds(t_all);
  record["timings"] = timings;
  RETURN_IF_ERROR(WriteFile(out / "adapt.json", record.dump(2) + "\n"));
  std::printf("timings: %s\n", timings.dump().c_str());
  std::fflush(stdout);
  return absl::OkStatus();
}

absl::Status RunRollback(const AdaptArgs& a) {
  AdaptClient server(a.client);
  ASSIGN_OR_RETURN(const v1::CollectionInfo info, server.Describe(a.rollback));
  const fs::path record_path = fs::path(info.model_dir()) / "adapt.json";
  std::error_code ec;
  if (info.model_dir().empty() || !fs::exists(record_path, ec)) {
    return absl::FailedPreconditionError(
        absl::StrCat("collection ", a.rollback, " is on ", info.model_id(), " (",
                     info.model_dir().empty() ? "the default model" : info.model_dir(),
                     "), which neodb adapt did not make: nothing to roll back to"));
  }
  ASSIGN_OR_RETURN(const json record, ReadJson(record_path));
  const std::string prev_dir = record.value("/previous/model_dir"_json_pointer, "");
  const std::string prev_id = record.value("/previous/model_id"_json_pointer, "");
  if (record.value("collection", "") != a.rollback || prev_dir.empty() || prev_id.empty()) {
    return absl::FailedPreconditionError(absl::StrCat(
        record_path.string(), " records no previous model of collection ", a.rollback));
  }
  // The previous checkpoint must still be the one the collection left.
  // Either architecture (adapt fine-tunes NeoBERT and BERT models alike).
  ASSIGN_OR_RETURN(const std::shared_ptr<const encoder::Model> prev, encoder::LoadModel(prev_dir));
  if (prev->model_id() != prev_id) {
    return absl::FailedPreconditionError(
        absl::StrCat("the previous model directory ", prev_dir, " now holds ", prev->model_id(),
                     ", not the recorded ", prev_id, "; not rolling back"));
  }
  RETURN_IF_ERROR(server.ReindexAndWait(a.rollback, prev_dir));
  // The fusion the collection had before adapt (records from before
  // per-collection fusions have none: adaptive).
  keyword::FusionOptions prev_fusion;
  ASSIGN_OR_RETURN(prev_fusion.method,
                   keyword::ParseFusionMethod(
                       record.value("/previous/fusion"_json_pointer, std::string("adaptive"))));
  prev_fusion.alpha = record.value("/previous/fusion_alpha"_json_pointer, 0.5);
  RETURN_IF_ERROR(server.SetFusion(a.rollback, prev_fusion));
  ASSIGN_OR_RETURN(const v1::VerifyResponse v, server.Verify(a.rollback));
  std::printf("rolled back: %s is on %s (%s); verify: %llu stored, %llu indexed, %llu foreign\n",
              a.rollback.c_str(), v.model_id().c_str(), prev_dir.c_str(),
              static_cast<unsigned long long>(v.stored()),
              static_cast<unsigned long long>(v.indexed()),
              static_cast<unsigned long long>(v.foreign_model()));
  if (v.model_id() != prev_id) {
    return absl::InternalError(
        absl::StrCat("after the rollback the collection is on ", v.model_id(), ", not ", prev_id));
  }
  return absl::OkStatus();
}

}  // namespace

void RegisterAdaptCommands(CLI::App& app) {
  auto a = std::make_shared<AdaptArgs>();
  // Measured on the shipped default model (tools/adapt/README.md, SciFact):
  // 150 steps of 32 pairs at a peak lr of 2e-4 with a tenth of the steps as
  // warm-up. finetune's 2e-5 suits a full-size NeoBERT; this small model at
  // 2e-5 would barely move in 150 steps.
  a->trainer.steps = 150;
  a->trainer.lr = 2e-4;
  a->trainer.warmup = kWarmupTenth;
  CLI::App* cmd = app.add_subcommand(
      "adapt",
      "Fine-tune a collection's model on your (query, document) pairs with negatives mined from "
      "the collection, compare old and new, and swap the collection onto it (--apply)");
  a->client.timeout_s = 60;
  AddClientFlags(cmd, &a->client);
  auto* coll = cmd->add_option("--collection", a->collection, "The collection to adapt");
  auto* rb = cmd->add_option("--rollback", a->rollback,
                             "Swap this collection back to the model it had before adapt");
  coll->excludes(rb);
  auto* pairs = cmd->add_option(
      "--pairs", a->pairs,
      "JSONL {\"query\", \"positive_id\"} (or \"positive\": the document's text) per line");
  pairs->needs(coll);
  cmd->add_option("--eval", a->eval_file, "Held-out pairs (same format) instead of a split");
  cmd->add_option("--test", a->test_file,
                  "Pairs (same format) only reported, never used for a decision (e.g. a "
                  "benchmark's test split)");
  cmd->add_option("--eval-split", a->eval_split, "Fraction of the queries held out")
      ->capture_default_str();
  cmd->add_option("--split-seed", a->split_seed, "Seed of the split")->capture_default_str();
  cmd->add_option("--out", a->out,
                  "New model directory (default adapt-<collection>-<time> inside the server's "
                  "--models-dir when it has one, else in the current directory)");
  cmd->add_option("--negatives", a->negatives,
                  "Hard negatives per training pair in each step (0 = in-batch only)")
      ->capture_default_str();
  cmd->add_option("--negative-pool", a->negative_pool,
                  "Negatives mined per training query, of which each step draws --negatives "
                  "afresh (0 = exactly --negatives, always the same ones)")
      ->capture_default_str();
  cmd->add_option("--mine-from", a->mine_from,
                  "Where negatives are mined first: served (the collection's default ranking, "
                  "hybrid) | vector (its model alone) | keyword (BM25 alone)")
      ->capture_default_str();
  cmd->add_option("--rounds", a->rounds,
                  "Mining rounds: each round after the first mines again from the model the "
                  "round before trained, then trains it further (--steps in all)")
      ->capture_default_str();
  cmd->add_option("--mine-depth", a->mine_depth, "Top documents of each search leg mined")
      ->capture_default_str();
  cmd->add_option("--mine-skip", a->mine_skip,
                  "Top ranks of each leg passed over (likeliest unlabelled relevant documents)")
      ->capture_default_str();
  cmd->add_option("--mine-max-score-ratio", a->max_score_ratio,
                  "Candidates the current model scores above this x the query's positive are "
                  "passed over as likely unlabelled positives (e.g. 0.95; 0 = off)")
      ->capture_default_str();
  cmd->add_flag("--embed-old", a->embed_old,
                "Embed the collection with its current model in process instead of reading the "
                "vectors the server stores (to check them; slower)");
  cmd->add_option("--near-duplicate-jaccard", a->jaccard,
                  "Word-set Jaccard at or above which a candidate counts as a copy of a positive")
      ->capture_default_str();
  cmd->add_option("--steps", a->trainer.steps, "Optimiser steps")->capture_default_str();
  cmd->add_option("--batch-size", a->trainer.batch_size, "Pairs per step")->capture_default_str();
  cmd->add_option("--lr", a->trainer.lr,
                  "Peak learning rate (2e-4 suits the default model; a full-size NeoBERT wants "
                  "about 2e-5)")
      ->capture_default_str();
  cmd->add_option("--warmup", a->trainer.warmup,
                  "Linear warm-up steps of each round (default: a tenth of its steps)");
  cmd->add_option("--temperature", a->trainer.temperature,
                  "InfoNCE temperature (as neodb finetune's; lower weighs the hardest negatives "
                  "more)")
      ->capture_default_str();
  cmd->add_option("--chunk-size", a->trainer.chunk_size, "GradCache chunk")->capture_default_str();
  cmd->add_option("--seed", a->trainer.seed, "Seed of the data order")->capture_default_str();
  cmd->add_flag_callback(
      "--train-zero-weights", [a] { a->trainer.keep_zero_weights = false; },
      "Also train matrix entries that start at exactly 0 (see neodb finetune)");
  cmd->add_option("--checkpoint-every", a->trainer.checkpoint_every,
                  "Checkpoint into <out>.work every N steps")
      ->capture_default_str();
  cmd->add_option("--max-length", a->max_length,
                  "Tokens kept of each training text (0 = the model's max_length)");
  cmd->add_option("--threads", a->threads, "Compute threads (0 = default)");
  cmd->add_flag("--resume", a->resume,
                "Continue an interrupted run with the same --out (reuses mined pairs, training "
                "checkpoint, or a finished model)");
  cmd->add_flag("--apply", a->apply, "Reindex the collection onto the new model if it is better");
  cmd->add_option("--min-gain", a->min_gain,
                  "--apply needs new - old hybrid nDCG@10 above this (may be negative)")
      ->capture_default_str();
  cmd->callback([a] {
    if (!a->rollback.empty()) {
      ExitIfError(RunRollback(*a));
      return;
    }
    if (a->collection.empty() || a->pairs.empty()) {
      ExitIfError(
          absl::InvalidArgumentError("adapt needs --collection and --pairs (or --rollback)"));
    }
    ExitIfError(RunAdapt(*a));
  });
}

}  // namespace neodb::cli
