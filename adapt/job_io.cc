#include "adapt/job_io.h"

#include "absl/strings/str_cat.h"
#include "common/atomic_file.h"
#include "common/env.h"

namespace neodb::adapt {

double SecondsSince(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

absl::Status WriteTextFile(const std::filesystem::path& path, const std::string& text) {
  return WriteFileAtomically(Env::Default(), path.string(), {text});
}

absl::StatusOr<nlohmann::json> ReadJsonFile(const std::filesystem::path& path, Env* env) {
  absl::StatusOr<std::string> text = ReadFileToString(env, path.string());
  if (absl::IsNotFound(text.status())) {
    return absl::NotFoundError(absl::StrCat("cannot open ", path.string()));
  }
  if (!text.ok()) return text.status();
  try {
    return nlohmann::json::parse(*text);
  } catch (const nlohmann::json::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat(path.string(), ": malformed JSON: ", e.what()));
  }
}

std::string VerifyCounts(const VerifyReport& v) {
  return absl::StrCat("verify: ", v.stored, " stored, ", v.indexed, " indexed, ", v.foreign_model,
                      " foreign");
}

absl::Status CheckVerifiedModel(const VerifyReport& v, const std::string& expected,
                                const std::string& what) {
  if (v.model_id == expected) return absl::OkStatus();
  return absl::InternalError(
      absl::StrCat("after ", what, " the collection is on ", v.model_id, ", not ", expected));
}

}  // namespace neodb::adapt
