// AdaptJob: the order of the stages, and the checks that run before any
// work (the flags, the collection, --out, the dry run of --apply's reindex),
// then the collection's documents and the pairs. The mining and training
// rounds are adapt_rounds.cc, the measurements and their outcome
// adapt_outcome.cc, the rollback adapt_rollback.cc.
#include "adapt/adapt_job.h"

#include <cstdio>
#include <ctime>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "adapt/job_io.h"
#include "common/status_macros.h"
#include "encoder/train/finetune.h"

namespace neodb::adapt {
namespace {

namespace fs = std::filesystem;

// --out, or a new adapt-<collection>-<time> inside `models_dir` (the
// server's, where it can load the model; "" when it has none) or else in the
// current directory; absolute.
fs::path DefaultOut(const AdaptOptions& a, const std::string& models_dir) {
  const std::string name = absl::StrCat("adapt-", a.collection, "-", std::time(nullptr));
  const fs::path out = !a.out.empty()         ? fs::path(a.out)
                       : !models_dir.empty() ? fs::path(models_dir) / name
                                             : fs::path(name);
  return fs::absolute(out).lexically_normal();
}

}  // namespace

AdaptJob::AdaptJob(AdaptOptions options, ServerSide& server, NewProgress progress)
    : a_(std::move(options)), server_(server), progress_(std::move(progress)) {}

absl::Status AdaptJob::Run() {
  RETURN_IF_ERROR(CheckPreconditions());
  RETURN_IF_ERROR(ReadCollection());
  RETURN_IF_ERROR(MineAndTrain());
  RETURN_IF_ERROR(Evaluate());
  RETURN_IF_ERROR(Report());
  RETURN_IF_ERROR(WriteRecord());
  RETURN_IF_ERROR(Apply());
  return Finish();
}

// --- preconditions ----------------------------------------------------------

absl::Status AdaptJob::CheckPreconditions() {
  RETURN_IF_ERROR(CheckOptions(a_));
  t_all_ = std::chrono::steady_clock::now();
  ASSIGN_OR_RETURN(facts_, server_.Describe(a_.collection));
  RETURN_IF_ERROR(CheckCollection());
  // Before any mining or training: an architecture the trainer runs.
  RETURN_IF_ERROR(encoder::train::CheckTrainable(facts_.model_dir));
  ASSIGN_OR_RETURN(reading_, std::move(facts_.reading));
  RETURN_IF_ERROR(ChooseOut());
  // Everything the swap at the end needs, asked now, before anything is
  // written, mined or trained: not after an hour of training.
  if (a_.apply) RETURN_IF_ERROR(CheckApply());
  return absl::OkStatus();
}

absl::Status AdaptJob::CheckCollection() const {
  if (facts_.external_vectors) {
    // Its documents' vectors are the client's, not a model's of this server:
    // a fine-tuned model could embed queries only, against vectors it never made.
    return absl::FailedPreconditionError(absl::StrCat(
        "collection ", a_.collection, " holds external vectors (", facts_.model_id,
        "), which the client computes: there is no model on the server that embeds its "
        "documents, so none to fine-tune"));
  }
  if (facts_.model_dir.empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat("collection ", a_.collection, " is on the server's unnamed default model (",
                     facts_.model_id, "); start the server with --model DIR to fine-tune it"));
  }
  return absl::OkStatus();
}

// Without --out the new model goes where the server can load it: into its
// models directory when it has one, else into the current directory.
absl::Status AdaptJob::ChooseOut() {
  ASSIGN_OR_RETURN(models_dir_, server_.ModelsDir());
  out_ = DefaultOut(a_, models_dir_);
  side_ = fs::path(out_.string() + ".adapt");
  std::error_code ec;
  trained_ = fs::exists(out_ / "lineage.json", ec);
  if (fs::exists(out_, ec) && !(a_.resume && trained_)) {
    return absl::AlreadyExistsError(absl::StrCat(
        "--out ", out_.string(), " exists; choose a new directory (or --resume a finished one)"));
  }
  return absl::OkStatus();
}

// Whether the server would take --apply's reindex onto <out> (its dry run):
// the key's role, the collection, the path. Its refusal, with what to do.
absl::Status AdaptJob::CheckApply() const {
  absl::Status s = server_.CheckReindex(a_.collection, out_.string());
  if (s.ok()) return s;
  // A key whose role is too low is refused before the handler, in words of
  // its own; the path is refused with "models".
  std::string advice;
  if (s.code() == absl::StatusCode::kPermissionDenied &&
      absl::StrContains(s.message(), "models")) {
    advice = models_dir_.empty()
                 ? "; --out must then lie inside DIR (or be left out: adapt then writes "
                   "inside it)"
                 : absl::StrCat("; --out must lie inside the server's models directory ",
                                models_dir_, " (or be left out: adapt then writes inside it)");
  }
  return absl::Status(s.code(),
                      absl::StrCat("--apply: the server would not reindex ", a_.collection,
                                   " onto ", out_.string(), ": ", s.message(), advice,
                                   ". Nothing was done (run without --apply to only measure)"));
}

// --- 1. the collection's documents and the pairs ------------------------------

absl::Status AdaptJob::ReadCollection() {
  const auto t = std::chrono::steady_clock::now();
  // With the vectors the server holds for them: the current model's vectors
  // of the collection, exactly as served, with nothing to embed.
  stored_ = StoredVectors{};
  stored_.model_id = facts_.model_id;
  ASSIGN_OR_RETURN(docs_, server_.ListDocuments(a_.collection, reading_.title_field,
                                                a_.embed_old ? nullptr : &stored_));
  if (docs_.size() == 0) return absl::FailedPreconditionError("the collection is empty");
  ASSIGN_OR_RETURN(keyword_index_, BuildKeywordIndex(docs_, reading_.keyword));
  timings_["list_and_keyword_index_s"] = SecondsSince(t);
  const EmbedSettings& settings = reading_.embed;
  std::fprintf(stderr, "collection %s: %lld documents, model %s (%s), %s, %s\n",
               a_.collection.c_str(), static_cast<long long>(docs_.size()),
               facts_.model_id.c_str(), facts_.model_dir.c_str(),
               std::string(index::MetricName(settings.metric)).c_str(),
               std::string(encoder::PrecisionName(settings.precision)).c_str());
  std::fprintf(stderr, "keyword leg as the collection's: analyzer %s, BM25 k1 %g b %g%s\n",
               std::string(keyword::AnalyzerKindName(reading_.keyword.options.analyzer)).c_str(),
               reading_.keyword.options.k1, reading_.keyword.options.b,
               reading_.title_field.empty()
                   ? ""
                   : absl::StrFormat(", title field \"%s\" at weight %g", reading_.title_field,
                                     reading_.keyword.title_weight)
                         .c_str());
  return ReadPairs();
}

absl::Status AdaptJob::ReadPairs() {
  ASSIGN_OR_RETURN(std::vector<QueryPositives> all, ReadAdaptPairs(a_.pairs, docs_));
  if (!a_.eval_file.empty()) {
    split_.train = std::move(all);
    ASSIGN_OR_RETURN(split_.held_out, ReadAdaptPairs(a_.eval_file, docs_));
  } else {
    ASSIGN_OR_RETURN(split_, SplitPairs(all, a_.eval_split, a_.split_seed));
  }
  std::fprintf(stderr, "%zu training queries, %zu held-out queries\n", split_.train.size(),
               split_.held_out.size());
  return absl::OkStatus();
}

}  // namespace neodb::adapt
