#include "encoder/train/distill_job.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <memory>
#include <thread>

#include "absl/strings/str_cat.h"
#include "encoder/checkpoint/config.h"
#include "encoder/tokenizer/tokenizer.h"
#include "encoder/train/finetune.h"
#include "encoder/train/teacher_cache.h"

namespace neodb::encoder::train {

namespace fs = std::filesystem;

absl::Status RunDistill(const DistillJobOptions& options, std::FILE* log, std::FILE* progress) {
  // Everything that can fail without the teacher fails before it embeds.
  RETURN_IF_ERROR(CheckNewOutputDir(options.out_dir));
  if (options.teacher_dir.empty()) return absl::InvalidArgumentError("--teacher is required");
  if (options.texts_file.empty()) return absl::InvalidArgumentError("--texts is required");
  RETURN_IF_ERROR(CheckTrainable(options.student_dir));
  RETURN_IF_ERROR(CheckTrainerNumbers(options.trainer));
  if (options.distill.batch_size < 2) {
    return absl::InvalidArgumentError("--batch must be at least 2");
  }
  if (!(options.distill.direct_weight >= 0) || !std::isfinite(options.distill.direct_weight)) {
    return absl::InvalidArgumentError("--direct-weight must be a number >= 0");
  }
  if (options.threads < 0) return absl::InvalidArgumentError("--threads must be >= 0");
  const fs::path out = fs::path(options.out_dir).lexically_normal();
  const fs::path work = fs::path(out.string() + ".work");
  std::error_code ec;
  if (!options.trainer.resume && fs::exists(work / "checkpoint", ec)) {
    return absl::FailedPreconditionError(
        absl::StrCat("a previous run left a checkpoint in ", work.string(),
                     "; pass --resume to continue it, or delete that directory"));
  }
  // The student's training length (finetune resolves --max-length 0 to the
  // same), so the teacher's texts are cut where the student's will be.
  ASSIGN_OR_RETURN(const TrainingLength student, TrainingMaxLength(options.student_dir));
  ASSIGN_OR_RETURN(std::unique_ptr<Tokenizer> student_tokenizer,
                   LoadTokenizer(options.student_dir));

  TeacherCacheOptions copt;
  copt.teacher_dir = options.teacher_dir;
  copt.texts_file = options.texts_file;
  copt.cache_dir = options.cache_dir.empty() ? out.string() + ".distill" : options.cache_dir;
  copt.student_tokenizer = student_tokenizer.get();
  copt.student_max_length = student.default_length;
  copt.batch_lines = options.teacher_batch_lines;
  copt.threads = options.threads > 0
                     ? options.threads
                     : std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  ASSIGN_OR_RETURN(const TeacherCacheInfo cache, BuildTeacherCache(copt, log, progress));
  if (options.distill.batch_size > cache.texts) {
    return absl::InvalidArgumentError(absl::StrCat("--batch ", options.distill.batch_size,
                                                   " is larger than the ", cache.texts,
                                                   " texts"));
  }

  FinetuneOptions fo;
  fo.model_dir = options.student_dir;
  fo.eval_file = options.eval_file;
  fo.out_dir = options.out_dir;
  fo.trainer = options.trainer;
  fo.trainer.distill_weight = 1;
  fo.threads = options.threads;
  fo.distill_file = cache.teacher_file;
  fo.distill = options.distill;
  fo.lineage_extra = {{"distill",
                       {{"teacher", {{"model_id", cache.teacher_model_id},
                                     {"dir", options.teacher_dir},
                                     {"dim", cache.teacher_dim}}},
                        {"texts_file", options.texts_file},
                        {"texts_hash", cache.identity["texts"]["hash"]},
                        {"texts", cache.texts},
                        {"cut", cache.cut},
                        {"batch_size", options.distill.batch_size},
                        {"direct_weight", options.distill.direct_weight},
                        {"cache", copt.cache_dir}}}};
  RETURN_IF_ERROR(RunFinetune(fo, log));
  std::fprintf(log, "the teacher cache stays in %s for reruns (delete it when done)\n",
               copt.cache_dir.c_str());
  return absl::OkStatus();
}

}  // namespace neodb::encoder::train
