#include "encoder/train/json_lines.h"

#include <sstream>

#include "absl/strings/str_cat.h"

namespace neodb::encoder::train {

absl::Status LineError(const std::string& name, int64_t line, const std::string& what) {
  return absl::InvalidArgumentError(absl::StrCat(name, ":", line, ": ", what));
}

absl::Status ForEachJsonObjectLine(
    const std::string& text, const std::string& name,
    const std::function<absl::Status(const nlohmann::json& object, int64_t line)>& fn) {
  std::istringstream in(text);
  std::string line_text;
  for (int64_t line = 1; std::getline(in, line_text); ++line) {
    if (line_text.find_first_not_of(" \t\r") == std::string::npos) continue;
    nlohmann::json obj;
    try {
      obj = nlohmann::json::parse(line_text);
    } catch (const nlohmann::json::exception& e) {
      return LineError(name, line, absl::StrCat("malformed JSON: ", e.what()));
    }
    if (!obj.is_object()) {
      return LineError(name, line, absl::StrCat("expected a JSON object, got ", obj.type_name()));
    }
    if (absl::Status s = fn(obj, line); !s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> ReadWholeFile(const std::string& path, const std::string& what,
                                          Env* env) {
  absl::StatusOr<std::string> text = ReadFileToString(env, path);
  if (absl::IsNotFound(text.status())) {
    return absl::NotFoundError(absl::StrCat("cannot open ", what, " ", path));
  }
  return text;
}

}  // namespace neodb::encoder::train
