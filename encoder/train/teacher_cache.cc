#include "encoder/train/teacher_cache.h"

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string_view>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/float_text.h"
#include "common/atomic_file.h"
#include "common/env.h"
#include "encoder/encoder.h"
#include "encoder/tokenizer/unicode_util.h"
#include "encoder/train/json_lines.h"
#include "xxhash.h"

namespace neodb::encoder::train {
namespace {

namespace fs = std::filesystem;
constexpr char kCacheFormat[] = "neodb-distill-cache-1";

bool IsSpace(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

// A kept text: bytes [begin, begin + size) of the texts file.
struct KeptText {
  size_t begin = 0;
  size_t size = 0;
  int64_t line = 0;  // 1-based
  bool cut = false;
};

// Whether a text fits both models, and the longest prefix of one that does.
class Fitter {
 public:
  Fitter(const Tokenizer& teacher, int64_t teacher_room, const Tokenizer& student,
         int64_t student_room)
      : teacher_(teacher),
        teacher_room_(teacher_room),
        student_(student),
        student_room_(student_room) {}

  absl::StatusOr<bool> Fits(std::string_view text) const {
    ASSIGN_OR_RETURN(const std::vector<int32_t> t, teacher_.Tokenize(text));
    if (static_cast<int64_t>(t.size()) > teacher_room_) return false;
    ASSIGN_OR_RETURN(const std::vector<int32_t> s, student_.Tokenize(text));
    return static_cast<int64_t>(s.size()) <= student_room_;
  }

  // The length of the longest prefix of `text` that fits and ends at a word
  // end; inside a first word too long for that, at a code point boundary; 0
  // when not one character fits. REQUIRES: valid UTF-8 with a non-space byte.
  absl::StatusOr<size_t> CutLength(std::string_view text) const {
    std::vector<size_t> ends;
    for (size_t i = 0; i < text.size(); ++i) {
      if (!IsSpace(text[i]) && (i + 1 == text.size() || IsSpace(text[i + 1]))) {
        ends.push_back(i + 1);
      }
    }
    ASSIGN_OR_RETURN(const size_t words, LongestFitting(text, ends));
    if (words > 0) return words;
    std::vector<size_t> chars;
    size_t pos = 0;
    while (pos < text.size() && IsSpace(text[pos])) ++pos;
    while (pos < ends.front()) {
      unicode::DecodeAt(text, &pos);
      chars.push_back(pos);
    }
    return LongestFitting(text, chars);
  }

 private:
  // The largest of the ascending prefix lengths `cands` whose prefix fits (0
  // if none). Token counts grow with the prefix, so this is a binary search;
  // every answer it returns was checked.
  absl::StatusOr<size_t> LongestFitting(std::string_view text,
                                        const std::vector<size_t>& cands) const {
    size_t best = 0;
    int64_t lo = 0, hi = static_cast<int64_t>(cands.size()) - 1;
    while (lo <= hi) {
      const int64_t mid = lo + (hi - lo) / 2;
      ASSIGN_OR_RETURN(const bool ok, Fits(text.substr(0, cands[mid])));
      if (ok) {
        best = cands[mid];
        lo = mid + 1;
      } else {
        hi = mid - 1;
      }
    }
    return best;
  }

  const Tokenizer& teacher_;
  const int64_t teacher_room_;
  const Tokenizer& student_;
  const int64_t student_room_;
};

// The texts of `content` to embed, cut to fit; see the header for the rules.
absl::StatusOr<std::vector<KeptText>> FitTexts(const std::string& content,
                                               const std::string& name, const Fitter& fitter,
                                               int64_t* lines) {
  std::vector<KeptText> kept;
  *lines = 0;
  size_t pos = 0;
  for (int64_t line = 1; pos < content.size(); ++line) {
    size_t end = content.find('\n', pos);
    if (end == std::string::npos) end = content.size();
    const size_t begin = pos;
    pos = end + 1;
    while (end > begin && IsSpace(content[end - 1])) --end;
    if (end == begin) continue;
    ++*lines;
    const std::string_view text(content.data() + begin, end - begin);
    if (absl::Status s = unicode::ValidateUtf8(text); !s.ok()) {
      return LineError(name, line, absl::StrCat("not valid UTF-8: ", s.message()));
    }
    auto fits = fitter.Fits(text);
    if (!fits.ok()) return LineError(name, line, std::string(fits.status().message()));
    KeptText k{begin, text.size(), line, false};
    if (!*fits) {
      auto cut = fitter.CutLength(text);
      if (!cut.ok()) return LineError(name, line, std::string(cut.status().message()));
      if (*cut == 0) {
        return LineError(name, line,
                         "not even its first character fits the teacher's and the student's "
                         "max_length");
      }
      k.size = *cut;
      k.cut = true;
    }
    kept.push_back(k);
  }
  return kept;
}

std::string_view TextOf(const std::string& content, const KeptText& k) {
  return std::string_view(content.data() + k.begin, k.size);
}

// `{"text":"…","vector":` — every cache line starts so (the text as the JSON
// library escapes it, UTF-8 kept).
std::string LineHead(std::string_view text) {
  return absl::StrCat("{\"text\":",
                      nlohmann::json(std::string(text))
                          .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace),
                      ",\"vector\":");
}

// OK when the cache.json `have` was made for what `want` describes.
absl::Status CheckIdentity(const nlohmann::json& have, const nlohmann::json& want,
                           const fs::path& dir) {
  const std::string advice =
      absl::StrCat("; delete ", dir.string(), " to embed again, or give another --cache");
  try {
    if (have.value("format", "") != kCacheFormat) {
      return absl::FailedPreconditionError(absl::StrCat(
          (dir / "cache.json").string(), " is not a neodb distillation cache", advice));
    }
    const nlohmann::json& ht = have.at("teacher");
    const nlohmann::json& wt = want.at("teacher");
    if (ht.at("model_id") != wt.at("model_id")) {
      return absl::FailedPreconditionError(absl::StrCat(
          "the teacher cache in ", dir.string(), " was made by another teacher: model ",
          ht.at("model_id").get<std::string>(), " (", ht.value("dir", "?"), "), not ",
          wt.at("model_id").get<std::string>(), " (", wt.at("dir").get<std::string>(), ")",
          advice));
    }
    for (const char* key : {"pooling", "normalize", "prefix", "max_length", "dim"}) {
      if (ht.value(key, nlohmann::json()) != wt.at(key)) {
        return absl::FailedPreconditionError(absl::StrCat(
            "the teacher cache in ", dir.string(), " was made with the teacher's ", key, " ",
            ht.value(key, nlohmann::json()).dump(), ", this run's is ", wt.at(key).dump(),
            advice));
      }
    }
    const nlohmann::json& hx = have.at("texts");
    const nlohmann::json& wx = want.at("texts");
    if (hx.at("hash") != wx.at("hash")) {
      return absl::FailedPreconditionError(absl::StrCat(
          "the teacher cache in ", dir.string(), " was made from other texts (",
          hx.value("file", "?"), ", hash ", hx.at("hash").get<std::string>(), "), not ",
          wx.at("file").get<std::string>(), " (hash ", wx.at("hash").get<std::string>(), ")",
          advice));
    }
    const nlohmann::json& hf = have.at("fitted");
    const nlohmann::json& wf = want.at("fitted");
    if (hf.at("hash") != wf.at("hash") || hf.at("count") != wf.at("count")) {
      return absl::FailedPreconditionError(absl::StrCat(
          "the teacher cache in ", dir.string(), " holds the texts cut to fit another student (",
          hf.at("cut").dump(), " cut, student max_length ", hf.value("student_max_length", 0),
          "); this student cuts ", wf.at("cut").dump(), " (max_length ",
          wf.at("student_max_length").dump(), ")", advice));
    }
  } catch (const nlohmann::json::exception& e) {
    return absl::DataLossError(
        absl::StrCat((dir / "cache.json").string(), ": malformed: ", e.what(), advice));
  }
  return absl::OkStatus();
}

// Reads an existing cache.json and checks it, or writes `identity` as a new one.
absl::Status OpenIdentity(const fs::path& dir, const nlohmann::json& identity) {
  const fs::path path = dir / "cache.json";
  std::error_code ec;
  if (fs::exists(path, ec)) {
    ASSIGN_OR_RETURN(const std::string text, ReadWholeFile(path.string(), "teacher cache"));
    nlohmann::json have;
    try {
      have = nlohmann::json::parse(text);
    } catch (const nlohmann::json::exception& e) {
      return absl::DataLossError(absl::StrCat(path.string(), ": malformed JSON: ", e.what(),
                                              "; delete ", dir.string(), " to embed again"));
    }
    return CheckIdentity(have, identity, dir);
  }
  if (fs::exists(dir / "teacher.jsonl", ec)) {
    return absl::FailedPreconditionError(
        absl::StrCat(dir.string(), " holds a teacher.jsonl without its cache.json, so what made "
                                   "it is unknown; delete ",
                     dir.string(), " to embed again"));
  }
  return WriteFileAtomically(Env::Default(), path.string(), {identity.dump(2) + "\n"});
}

// How many lines of an existing teacher.jsonl to keep and their byte length:
// complete lines that are the texts they should be, cut back to a whole
// number of batches unless the file is complete.
absl::Status ScanExisting(const fs::path& path, const std::string& content,
                          const std::vector<KeptText>& kept, int64_t batch_lines,
                          int64_t* keep_lines, size_t* keep_bytes) {
  *keep_lines = 0;
  *keep_bytes = 0;
  std::error_code ec;
  if (!fs::exists(path, ec)) return absl::OkStatus();
  ASSIGN_OR_RETURN(const std::string have, ReadWholeFile(path.string(), "teacher cache"));
  std::vector<size_t> ends;
  size_t pos = 0;
  for (size_t nl; (nl = have.find('\n', pos)) != std::string::npos; pos = nl + 1) {
    const int64_t i = static_cast<int64_t>(ends.size());
    if (i >= static_cast<int64_t>(kept.size())) {
      return absl::DataLossError(absl::StrCat(path.string(), " holds more lines than the ",
                                              kept.size(), " texts; delete ",
                                              path.parent_path().string(), " to embed again"));
    }
    const std::string head = LineHead(TextOf(content, kept[i]));
    const std::string_view line(have.data() + pos, nl - pos);
    if (line.size() < head.size() + 3 || line.substr(0, head.size()) != head ||
        line.substr(line.size() - 2) != "]}") {
      return absl::DataLossError(absl::StrCat(path.string(), ":", i + 1,
                                              ": not the teacher vector of text line ",
                                              kept[i].line, "; delete ",
                                              path.parent_path().string(), " to embed again"));
    }
    ends.push_back(nl + 1);
  }
  int64_t n = static_cast<int64_t>(ends.size());
  if (n < static_cast<int64_t>(kept.size())) n -= n % batch_lines;
  *keep_lines = n;
  *keep_bytes = n == 0 ? 0 : ends[static_cast<size_t>(n - 1)];
  return absl::OkStatus();
}

std::string Duration(double seconds) {
  const int64_t s = static_cast<int64_t>(seconds + 0.5);
  if (s >= 3600) return absl::StrFormat("%dh%02dm", s / 3600, (s % 3600) / 60);
  if (s >= 60) return absl::StrFormat("%dm%02ds", s / 60, s % 60);
  return absl::StrFormat("%ds", s);
}

}  // namespace

absl::StatusOr<TeacherCacheInfo> BuildTeacherCache(const TeacherCacheOptions& options,
                                                   std::FILE* log, std::FILE* progress) {
  if (options.student_tokenizer == nullptr || options.student_max_length < 3) {
    return absl::InvalidArgumentError("the teacher cache needs the student's tokenizer and length");
  }
  if (options.batch_lines < 1) {
    return absl::InvalidArgumentError("--teacher-batch-lines must be at least 1");
  }
  if (options.threads < 1) return absl::InvalidArgumentError("--threads must be at least 1");
  EncoderOptions eopts;
  eopts.backend.num_threads = options.threads;
  ASSIGN_OR_RETURN(std::unique_ptr<Encoder> teacher, Encoder::Open(options.teacher_dir, eopts));
  const ModelDefaults& defaults = teacher->defaults();
  EmbedOptions embed;
  embed.pooling = defaults.pooling;
  embed.normalize = defaults.normalize;
  embed.overflow = Overflow::kError;
  embed.prefix = defaults.document_prefix;
  ASSIGN_OR_RETURN(const std::vector<int32_t> prefix_ids,
                   teacher->tokenizer().Tokenize(embed.prefix));
  const int64_t teacher_room =
      teacher->max_length() - 2 - static_cast<int64_t>(prefix_ids.size());
  if (teacher_room < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        options.teacher_dir, ": the document prompt leaves no room for text under max_length ",
        teacher->max_length()));
  }

  ASSIGN_OR_RETURN(const std::string content, ReadWholeFile(options.texts_file, "texts file"));
  const Fitter fitter(teacher->tokenizer(), teacher_room, *options.student_tokenizer,
                      options.student_max_length - 2);
  int64_t lines = 0;
  ASSIGN_OR_RETURN(const std::vector<KeptText> kept,
                   FitTexts(content, options.texts_file, fitter, &lines));
  if (kept.size() < 2) {
    return absl::InvalidArgumentError(absl::StrCat(
        options.texts_file, ": distillation needs at least two texts, it has ", kept.size()));
  }
  int64_t cut = 0;
  XXH3_state_t* state = XXH3_createState();
  XXH3_64bits_reset(state);
  for (const KeptText& k : kept) {
    cut += k.cut ? 1 : 0;
    XXH3_64bits_update(state, content.data() + k.begin, k.size);
    XXH3_64bits_update(state, "\n", 1);
  }
  const std::string fitted_hash = absl::StrFormat("%016x", XXH3_64bits_digest(state));
  XXH3_freeState(state);

  TeacherCacheInfo info;
  info.teacher_model_id = teacher->model_id();
  info.teacher_dim = teacher->dim();
  info.texts = static_cast<int64_t>(kept.size());
  info.cut = cut;
  info.identity = {
      {"format", kCacheFormat},
      {"teacher",
       {{"model_id", teacher->model_id()},
        {"dir", options.teacher_dir},
        {"pooling", embed.pooling == Pooling::kCls ? "cls" : "mean"},
        {"normalize", embed.normalize},
        {"prefix", embed.prefix},
        {"max_length", teacher->max_length()},
        {"dim", teacher->dim()}}},
      {"texts",
       {{"file", options.texts_file},
        {"hash", absl::StrFormat("%016x", XXH3_64bits(content.data(), content.size()))},
        {"lines", lines}}},
      {"fitted",
       {{"count", info.texts},
        {"cut", cut},
        {"hash", fitted_hash},
        {"student_max_length", options.student_max_length}}},
      {"batch_lines", options.batch_lines}};
  std::fprintf(log,
               "teacher %s: %s, %s, %lld-d, %s pooling%s, document prompt %s; texts %s: %lld "
               "lines, %lld cut to fit the teacher's max_length %lld and the student's %lld\n",
               options.teacher_dir.c_str(),
               std::string(ArchitectureName(teacher->architecture())).c_str(),
               teacher->model_id().c_str(), static_cast<long long>(teacher->dim()),
               embed.pooling == Pooling::kCls ? "cls" : "mean",
               embed.normalize ? ", normalised" : "",
               embed.prefix.empty() ? "none" : nlohmann::json(embed.prefix).dump().c_str(),
               options.texts_file.c_str(), static_cast<long long>(lines),
               static_cast<long long>(cut), static_cast<long long>(teacher->max_length()),
               static_cast<long long>(options.student_max_length));
  std::fflush(log);

  const fs::path dir(options.cache_dir);
  RETURN_IF_ERROR(Env::Default()->CreateDir(dir.string()));
  RETURN_IF_ERROR(OpenIdentity(dir, info.identity));
  const fs::path path = dir / "teacher.jsonl";
  info.teacher_file = path.string();
  int64_t done = 0;
  size_t keep_bytes = 0;
  RETURN_IF_ERROR(ScanExisting(path, content, kept, options.batch_lines, &done, &keep_bytes));
  info.reused = done;

  // The journal: opened for append, cut back to its last complete batch
  // (durable before anything is appended after it), then a batch at a time.
  Env* env = Env::Default();
  ASSIGN_OR_RETURN(std::unique_ptr<WritableFile> journal, env->NewAppendableFile(path.string()));
  absl::Status s = env->TruncateFile(path.string(), keep_bytes);
  if (s.ok()) s = journal->Sync();
  if (s.ok()) s = env->SyncDir(dir.string());
  const auto start = std::chrono::steady_clock::now();
  auto last_report = start;
  std::vector<std::string> batch;
  for (int64_t first = done; s.ok() && first < info.texts; first += options.batch_lines) {
    const int64_t end = std::min(info.texts, first + options.batch_lines);
    batch.clear();
    for (int64_t i = first; i < end; ++i) batch.emplace_back(TextOf(content, kept[i]));
    auto vectors = teacher->Embed(batch, embed);
    if (!vectors.ok()) {
      s = absl::Status(vectors.status().code(),
                       absl::StrCat(options.texts_file, " lines ", kept[first].line, "-",
                                    kept[end - 1].line, ": ", vectors.status().message()));
      break;
    }
    std::string out;
    for (int64_t i = first; i < end && s.ok(); ++i) {
      const std::vector<float>& v = (*vectors)[i - first].vector;
      double norm = 0;
      for (float x : v) norm += static_cast<double>(x) * x;
      if (!(norm > 0) || !std::isfinite(norm)) {
        s = LineError(options.texts_file, kept[i].line,
                      "the teacher's vector is zero or not finite");
        break;
      }
      absl::StrAppend(&out, LineHead(batch[i - first]));
      AppendFloatJsonArray(&out, v);
      out += "}\n";
    }
    if (s.ok()) s = journal->Append(out);
    if (s.ok()) s = journal->Sync();
    if (!s.ok()) break;
    info.embedded += end - first;
    const auto now = std::chrono::steady_clock::now();
    if (std::chrono::duration<double>(now - last_report).count() >= options.progress_seconds &&
        end < info.texts) {
      last_report = now;
      const double secs = std::chrono::duration<double>(now - start).count();
      const double rate = static_cast<double>(info.embedded) / secs;
      std::fprintf(progress, "teacher: %lld/%lld texts (%.1f%%), %.1f texts/s, ETA %s\n",
                   static_cast<long long>(end), static_cast<long long>(info.texts),
                   100.0 * static_cast<double>(end) / static_cast<double>(info.texts), rate,
                   Duration(static_cast<double>(info.texts - end) / rate).c_str());
      std::fflush(progress);
    }
  }
  if (s.ok()) s = journal->Close();
  RETURN_IF_ERROR(s);
  const double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::fprintf(log, "teacher cache %s: %lld texts, %lld reused, %lld embedded now%s\n",
               dir.string().c_str(), static_cast<long long>(info.texts),
               static_cast<long long>(info.reused), static_cast<long long>(info.embedded),
               info.embedded > 0
                   ? absl::StrFormat(" (%.1f texts/s)", static_cast<double>(info.embedded) / secs)
                         .c_str()
                   : "");
  std::fflush(log);
  return info;
}

}  // namespace neodb::encoder::train
